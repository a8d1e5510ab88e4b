/* Driver for the (ignored) stress test: runs a Lua script through an
 * instrumented Lua 5.4 interpreter. */
#include <stdio.h>

#include "lauxlib.h"
#include "lua.h"
#include "lualib.h"

static const char *script =
    "local function fib(n) if n < 2 then return n end return fib(n-1) + fib(n-2) end\n"
    "local t = {}\n"
    "for i = 1, 2000 do t[#t + 1] = string.format('%d:%s', i, tostring(i * 7 % 13)) end\n"
    "table.sort(t)\n"
    "local ok, err = pcall(function() error('boom') end)\n"
    "local s = 0\n"
    "for _, v in ipairs(t) do s = s + #v end\n"
    "local words = {}\n"
    "for w in ('the quick brown fox jumps over the lazy dog'):gmatch('%a+') do words[w] = (words[w] or 0) + 1 end\n"
    "print(fib(20), s, t[1], t[#t], ok, err, words.the, math.floor(math.sqrt(1e6)))\n";

int main(void) {
  lua_State *L = luaL_newstate();
  luaL_openlibs(L);
  if (luaL_dostring(L, script) != LUA_OK) {
    printf("error: %s\n", lua_tostring(L, -1));
    return 1;
  }
  lua_close(L);
  return 0;
}
