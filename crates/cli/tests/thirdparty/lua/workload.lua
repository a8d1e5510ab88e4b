-- A mixed workload for the Lua interpreter: recursion, tables, strings,
-- closures, sorting. `lua workload.lua N` scales it; the output is checked.
local n = tonumber(arg and arg[1]) or 1

local function fib(k) if k < 2 then return k end return fib(k - 1) + fib(k - 2) end

local function sieve(limit)
  local composite, count = {}, 0
  for i = 2, limit do
    if not composite[i] then
      count = count + 1
      for j = i * i, limit, i do composite[j] = true end
    end
  end
  return count
end

local function words(rounds)
  local freq = {}
  local text = "the quick brown fox jumps over the lazy dog and the cat"
  for _ = 1, rounds do
    for w in text:gmatch("%a+") do freq[w] = (freq[w] or 0) + 1 end
  end
  local keys = {}
  for k in pairs(freq) do keys[#keys + 1] = k end
  table.sort(keys, function(a, b) return freq[a] > freq[b] or (freq[a] == freq[b] and a < b) end)
  return keys[1] .. "=" .. freq[keys[1]]
end

local function closures(k)
  local acc = 0
  local adders = {}
  for i = 1, 16 do adders[i] = function(x) return x + i end end
  for i = 1, k do acc = adders[(i % 16) + 1](acc) % 1000003 end
  return acc
end

local out = {}
for round = 1, n do
  out[#out + 1] = string.format("%d %d %s %d", fib(25), sieve(100000), words(5000), closures(300000))
end
print(out[#out])
print(#out)
