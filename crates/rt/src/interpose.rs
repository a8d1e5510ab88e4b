//! The libc calls that end a process (or its image) without `exit`, and
//! `pthread_create`, taken over by defining them in the runtime:
//! `_exit`, `_Exit`, `execve`, `execv`, `execvp`, `execvpe`, `execl`,
//! `execle`, `execlp`, `fexecve`, `abort` write the profile first (a final
//! dump, see `dump`), then do what the C library does; `pthread_create`
//! gives each thread the program starts its counter blocks (`threads`) and
//! counts it; `daemon` is done here (see
//! [`hook_daemon`]) so that its parent's counts are written.
//!
//! # How
//!
//! Each name is a **weak** symbol, defined by a few instructions of
//! assembly that jump into this module's Rust code (x86-64 and AArch64;
//! elsewhere nothing is taken over). A definition in the executable takes
//! precedence over the C library's shared one, for every call from the
//! executable and from shared libraries that bind to it, however the program
//! is linked (no linker flags: `pathprof cc` links the runtime archive like
//! any library, and so can a user linking by hand). Weak, so that a fully
//! static link whose C library brings its own strong definition gets no
//! duplicate-symbol error (that definition then wins: no write before it; the
//! fatal-signal handlers still catch `abort`).
//!
//! The C library's own functions are found with `dlsym(RTLD_NEXT, name)` at
//! installation (or at first use). When there is none (a static executable),
//! the runtime does their work itself: `_exit` is the `exit_group` system
//! call, `execve`/`execv` the `execve` system call, `fexecve` `execveat`,
//! `execvp`/`execvpe` search `PATH` (default `/bin:/usr/bin`) like the C
//! library, `abort` raises SIGABRT with its default action. `pthread_create` has no
//! such fallback: in a fully static executable it fails with `EAGAIN` and a
//! one-line warning (the runtime's weak definition keeps the C library's out
//! of the link), so link programs that start threads dynamically (the
//! default of `pathprof cc`).
//!
//! `execl`, `execle`, `execlp` take variable arguments, which stable Rust
//! cannot define: their assembly stores the argument registers next to each
//! other and passes them, with the address of the arguments on the stack, to
//! [`hook_execl`], which collects the NULL-terminated list (and `execle`'s
//! environment after it) and calls the `execv` family.
//!
//! After a failed exec the process goes on: the dump already marked its
//! counts written, so they are not written again, and the process is not
//! counted again when it ends.

use crate::dump::{self, Trigger};
use crate::mem::MapVec;
use crate::{active, os, process};
use core::ffi::{c_char, c_int, c_void};
use core::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use pathprof_format::live as live_layout;

const EXIT: usize = 0;
const EXECVE: usize = 1;
const EXECV: usize = 2;
const EXECVP: usize = 3;
const EXECVPE: usize = 4;
const FEXECVE: usize = 5;
const ABORT: usize = 6;
const PTHREAD_CREATE: usize = 7;

const NAMES: [&core::ffi::CStr; 8] = [
    c"_exit",
    c"execve",
    c"execv",
    c"execvp",
    c"execvpe",
    c"fexecve",
    c"abort",
    c"pthread_create",
];

/// The C library's functions: 0 not looked up yet, 1 none, else the address.
static REAL: [AtomicUsize; 8] = [const { AtomicUsize::new(0) }; 8];

/// Looks up every C library function now (from the first registration, a
/// constructor, where `dlsym` is safe to call).
pub(crate) fn resolve_all() {
    for i in 0..NAMES.len() {
        real(i);
    }
}

/// The address of the C library's function `i`, or 0 if there is none.
fn real(i: usize) -> usize {
    match REAL[i].load(Relaxed) {
        0 => {
            // Safety: dlsym with a NUL-terminated name; RTLD_NEXT finds the
            // definition after ours (the C library's).
            let p = unsafe { libc::dlsym(libc::RTLD_NEXT, NAMES[i].as_ptr()) } as usize;
            let v = if p == 0 { 1 } else { p };
            REAL[i].store(v, Relaxed);
            if v == 1 {
                0
            } else {
                v
            }
        }
        1 => 0,
        v => v,
    }
}

extern "C" {
    static environ: *const *const c_char;
}

/// The final dump before the process ends or replaces its image: of every
/// module of the process when this copy handed over to the active runtime
/// (see `active`; a library's own calls bind to its hidden copy of these
/// functions).
/// `ending` goes in the live file's ending word first (continuous mode),
/// for a reader should the process be killed during the write.
fn final_dump(ending: u64) {
    let saved = os::errno();
    crate::live::set_ending(ending);
    match active::forwarded() {
        Some(rt) => (rt.dump)(active::DUMP_FINAL),
        None => {
            dump::dump(Trigger::Final);
        }
    }
    os::set_errno(saved);
}

/// An exec hook's body: the final write, then `exec` (the C library's
/// call or the system call); an exec that returns failed and the process
/// goes on running, so its live file's ending goes back to running.
fn exec_after_final_dump(exec: impl FnOnce() -> c_int) -> c_int {
    final_dump(live_layout::ENDING_EXIT);
    let rc = exec();
    crate::live::set_ending(0);
    rc
}

type ExitFn = unsafe extern "C" fn(c_int) -> !;
type ExecveFn =
    unsafe extern "C" fn(*const c_char, *const *const c_char, *const *const c_char) -> c_int;
type ExecvFn = unsafe extern "C" fn(*const c_char, *const *const c_char) -> c_int;
type FexecveFn = unsafe extern "C" fn(c_int, *const *const c_char, *const *const c_char) -> c_int;
type AbortFn = unsafe extern "C" fn() -> !;
type StartFn = extern "C" fn(*mut c_void) -> *mut c_void;
/// A thread's start routine as it may end: by returning or by unwinding
/// (`pthread_exit` and cancellation unwind it, forced).
pub(crate) type CreateFn = unsafe extern "C" fn(
    *mut libc::pthread_t,
    *const libc::pthread_attr_t,
    StartFn,
    *mut c_void,
) -> c_int;

/// `_exit` and `_Exit`.
extern "C" fn hook_exit(status: c_int) -> ! {
    final_dump(live_layout::ENDING_EXIT);
    crate::live::finish();
    match real(EXIT) {
        0 => os::exit_group(status),
        // Safety: the C library's `_exit`, which has this type.
        f => unsafe { core::mem::transmute::<usize, ExitFn>(f)(status) },
    }
}

/// `daemon`, done as the C library does it: `fork`; the parent leaves by
/// `_exit(0)`, here the hooked one, which writes its counts (the C library's
/// `daemon` ends its parent with an internal `_exit` nothing can take over,
/// losing them); the child (a fork child: its marks start at its counters, see `hooks`)
/// starts a session, moves to `/` unless `nochdir`, and points descriptors
/// 0, 1 and 2 at `/dev/null` unless `noclose`.
extern "C" fn hook_daemon(nochdir: c_int, noclose: c_int) -> c_int {
    // Safety: fork, setsid, chdir, open, dup2 and close with valid arguments
    // (NUL-terminated paths, descriptors this function opened or 0..=2).
    unsafe {
        match libc::fork() {
            -1 => return -1,
            0 => {}
            _ => hook_exit(0),
        }
        if libc::setsid() == -1 {
            return -1;
        }
        if nochdir == 0 && libc::chdir(c"/".as_ptr()) == -1 {
            return -1;
        }
        if noclose == 0 {
            let fd = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR);
            if fd == -1 {
                return -1;
            }
            for target in 0..3 {
                if fd != target {
                    libc::dup2(fd, target);
                }
            }
            if fd > 2 {
                libc::close(fd);
            }
        }
    }
    0
}

/// The `execve` system call (-1 and errno on failure).
fn sys_execve(
    path: *const c_char,
    argv: *const *const c_char,
    envp: *const *const c_char,
) -> c_int {
    // Safety: the caller's arguments, passed on unchanged as execve's.
    unsafe { libc::syscall(libc::SYS_execve, path, argv, envp) as c_int }
}

unsafe extern "C" fn hook_execve(
    path: *const c_char,
    argv: *const *const c_char,
    envp: *const *const c_char,
) -> c_int {
    exec_after_final_dump(|| match real(EXECVE) {
        0 => sys_execve(path, argv, envp),
        // Safety: the C library's `execve`, with the caller's arguments.
        f => unsafe { core::mem::transmute::<usize, ExecveFn>(f)(path, argv, envp) },
    })
}

unsafe extern "C" fn hook_execv(path: *const c_char, argv: *const *const c_char) -> c_int {
    exec_after_final_dump(|| match real(EXECV) {
        // Safety: `environ` is the C library's environment.
        0 => sys_execve(path, argv, unsafe { environ }),
        // Safety: the C library's `execv`, with the caller's arguments.
        f => unsafe { core::mem::transmute::<usize, ExecvFn>(f)(path, argv) },
    })
}

unsafe extern "C" fn hook_execvp(file: *const c_char, argv: *const *const c_char) -> c_int {
    exec_after_final_dump(|| match real(EXECVP) {
        // Safety: `environ` is the C library's environment.
        0 => search_path(file, argv, unsafe { environ }),
        // Safety: the C library's `execvp`, with the caller's arguments.
        f => unsafe { core::mem::transmute::<usize, ExecvFn>(f)(file, argv) },
    })
}

unsafe extern "C" fn hook_execvpe(
    file: *const c_char,
    argv: *const *const c_char,
    envp: *const *const c_char,
) -> c_int {
    exec_after_final_dump(|| match real(EXECVPE) {
        0 => search_path(file, argv, envp),
        // Safety: the C library's `execvpe`, with the caller's arguments.
        f => unsafe { core::mem::transmute::<usize, ExecveFn>(f)(file, argv, envp) },
    })
}

unsafe extern "C" fn hook_fexecve(
    fd: c_int,
    argv: *const *const c_char,
    envp: *const *const c_char,
) -> c_int {
    exec_after_final_dump(|| match real(FEXECVE) {
        // Safety: execveat of the caller's descriptor with an empty path.
        0 => unsafe {
            libc::syscall(
                libc::SYS_execveat,
                fd,
                c"".as_ptr(),
                argv,
                envp,
                libc::AT_EMPTY_PATH,
            ) as c_int
        },
        // Safety: the C library's `fexecve`, with the caller's arguments.
        f => unsafe { core::mem::transmute::<usize, FexecveFn>(f)(fd, argv, envp) },
    })
}

extern "C" fn hook_abort() -> ! {
    final_dump(live_layout::ENDING_SIGNAL + libc::SIGABRT as u64);
    match real(ABORT) {
        // The process dies by SIGABRT as abort's callers expect.
        0 => {
            os::raise_with_default_action(libc::SIGABRT);
            os::exit_group(127)
        }
        // Safety: the C library's `abort`.
        f => unsafe { core::mem::transmute::<usize, AbortFn>(f)() },
    }
}

unsafe extern "C" fn hook_pthread_create(
    thread: *mut libc::pthread_t,
    attr: *const libc::pthread_attr_t,
    start: StartFn,
    arg: *mut c_void,
) -> c_int {
    match active::forwarded() {
        // Safety: the active runtime's `pthread_create`, with our caller's
        // arguments.
        Some(rt) => unsafe { (rt.pthread_create)(thread, attr, start, arg) },
        // Safety: as for `pthread_create`.
        None => unsafe { create_program_thread(thread, attr, start, arg) },
    }
}

/// What a thread of the program runs before its own start routine.
struct Start {
    start: StartFn,
    arg: *mut c_void,
}

/// Starts a thread of the program (the runtime's `pthread_create`, also
/// the entry point of our `active::Runtime` table): it first takes its
/// counter blocks (`threads`), then runs `start(arg)`; the thread is
/// counted in the profile's facts.
///
/// # Safety
/// As for `pthread_create`.
pub(crate) unsafe extern "C" fn create_program_thread(
    thread: *mut libc::pthread_t,
    attr: *const libc::pthread_attr_t,
    start: StartFn,
    arg: *mut c_void,
) -> c_int {
    let Some(boxed) = crate::heap::boxed(Start { start, arg }) else {
        return libc::EAGAIN;
    };
    let main: StartFn = thread_main;
    // Safety: the caller's arguments, our start routine and its argument.
    let r = unsafe { create_thread(thread, attr, main, boxed.as_ptr().cast()) };
    if r == 0 {
        process::note_thread();
    } else {
        // Safety: the thread was not started; the box is still ours.
        unsafe { crate::heap::unbox(boxed) };
    }
    r
}

/// A program's thread: its counter blocks, then its start routine. Nothing
/// of ours is live across the call and the frame has no landing pad (the
/// archive does not unwind; its frames have call frame information and no
/// personality, as a C function's), so `pthread_exit` and cancellation
/// unwind through it untouched.
extern "C" fn thread_main(p: *mut c_void) -> *mut c_void {
    // Safety: the box `create_program_thread` made for this thread.
    let Start { start, arg } =
        unsafe { crate::heap::unbox(core::ptr::NonNull::new_unchecked(p.cast::<Start>())) };
    crate::threads::start_thread();
    start(arg)
}

/// Starts a thread with the C library's `pthread_create`, uncounted (the
/// runtime's own threads are not the program's).
///
/// # Safety
/// As for `pthread_create`.
pub(crate) unsafe fn create_thread(
    thread: *mut libc::pthread_t,
    attr: *const libc::pthread_attr_t,
    start: StartFn,
    arg: *mut c_void,
) -> c_int {
    match real(PTHREAD_CREATE) {
        0 => {
            static SAID: core::sync::atomic::AtomicBool =
                core::sync::atomic::AtomicBool::new(false);
            if !SAID.swap(true, Relaxed) {
                crate::msg::Line::new()
                    .text(
                        "pthread_create is not available in this static executable \
                         (the runtime takes it over to count threads); link it dynamically",
                    )
                    .emit();
            }
            libc::EAGAIN
        }
        // Safety: the C library's `pthread_create`, with the caller's arguments.
        f => unsafe { core::mem::transmute::<usize, CreateFn>(f)(thread, attr, start, arg) },
    }
}

/// `execl` (kind 0), `execle` (1), `execlp` (2): the assembly passes the
/// first [`REG_ARGS`] arguments after `path` stored side by side in `regs`
/// and the rest as they lie on the stack at `stack`.
///
/// # Safety
/// The caller passed a NULL-terminated list of strings after `path` (and,
/// for `execle`, an environment after the NULL), as those functions require.
unsafe extern "C" fn hook_execl(
    kind: u32,
    path: *const c_char,
    regs: *const *const c_char,
    stack: *const *const c_char,
) -> c_int {
    // Safety: argument i lies in the register area or on the stack, and the
    // caller's list goes at least up to its NULL (and execle's environment).
    let arg = |i: usize| unsafe {
        if i < REG_ARGS {
            *regs.add(i)
        } else {
            *stack.add(i - REG_ARGS)
        }
    };
    let mut argv: MapVec<*const c_char> = MapVec::new();
    let mut i = 0;
    loop {
        let a = arg(i);
        if !argv.push(a) {
            os::set_errno(libc::ENOMEM);
            return -1;
        }
        i += 1;
        if a.is_null() {
            break;
        }
    }
    let argv = argv.as_slice().as_ptr();
    // Safety: a NULL-terminated argument vector, the caller's strings.
    unsafe {
        match kind {
            0 => hook_execv(path, argv),
            1 => hook_execve(path, argv, arg(i).cast()),
            _ => hook_execvp(path, argv),
        }
    }
}

/// `execvpe` without the C library's: try each `PATH` directory like it does.
fn search_path(
    file: *const c_char,
    argv: *const *const c_char,
    envp: *const *const c_char,
) -> c_int {
    if file.is_null() {
        os::set_errno(libc::ENOENT);
        return -1;
    }
    // Safety: `file` is a C string, by execvp's contract.
    let name = unsafe { core::ffi::CStr::from_ptr(file) }.to_bytes();
    if name.is_empty() {
        os::set_errno(libc::ENOENT);
        return -1;
    }
    if name.contains(&b'/') {
        return exec_or_shell(file, argv, envp);
    }
    // Safety: getenv with a NUL-terminated name; the string is only read.
    let path = unsafe { libc::getenv(c"PATH".as_ptr()) };
    let path: &[u8] = if path.is_null() {
        b"/bin:/usr/bin"
    } else {
        // Safety: getenv returned a C string.
        unsafe { core::ffi::CStr::from_ptr(path) }.to_bytes()
    };
    let mut denied = false;
    let mut full: MapVec<u8> = MapVec::new();
    for dir in path.split(|&c| c == b':') {
        full.clear();
        let dir: &[u8] = if dir.is_empty() { b"." } else { dir };
        let ok = full.extend_from_slice(dir)
            && full.push(b'/')
            && full.extend_from_slice(name)
            && full.push(0);
        if !ok {
            os::set_errno(libc::ENOMEM);
            return -1;
        }
        exec_or_shell(full.as_slice().as_ptr().cast(), argv, envp);
        match os::errno() {
            libc::EACCES => denied = true,
            libc::ENOENT | libc::ENOTDIR | libc::ESTALE | libc::ENODEV | libc::ETIMEDOUT => {}
            _ => return -1,
        }
    }
    if denied {
        os::set_errno(libc::EACCES);
    }
    -1
}

/// `execve`, and for a file without a known executable format (`ENOEXEC`),
/// `/bin/sh file args…`, as `execvp` does.
fn exec_or_shell(
    file: *const c_char,
    argv: *const *const c_char,
    envp: *const *const c_char,
) -> c_int {
    sys_execve(file, argv, envp);
    if os::errno() != libc::ENOEXEC {
        return -1;
    }
    let mut v: MapVec<*const c_char> = MapVec::new();
    let mut ok = v.push(c"/bin/sh".as_ptr()) && v.push(file);
    let mut i = 1;
    // Safety: argv is NULL-terminated; element 0 is replaced by the shell's.
    while ok && !argv.is_null() && !unsafe { *argv }.is_null() {
        let a = unsafe { *argv.add(i) };
        ok &= v.push(a);
        if a.is_null() {
            break;
        }
        i += 1;
    }
    if !ok || !v.push(core::ptr::null()) {
        os::set_errno(libc::ENOMEM);
        return -1;
    }
    sys_execve(c"/bin/sh".as_ptr(), v.as_slice().as_ptr(), envp);
    os::set_errno(libc::ENOEXEC);
    -1
}

#[cfg(target_arch = "x86_64")]
const REG_ARGS: usize = 5;
#[cfg(target_arch = "aarch64")]
const REG_ARGS: usize = 7;
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
const REG_ARGS: usize = 0;

/// The whole interposition assembly of one architecture, given its section
/// type (`@progbits` or `%progbits`) and its `execl` common code (which starts
/// at `.Lpathprof_execl_common` and calls `{execl}`): every hooked name's
/// trampoline, from the architecture's `trampoline!` and `execl_trampoline!`,
/// and the hooks they jump to.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
macro_rules! interpose_asm {
    ($progbits:literal, $($execl_common:literal),* $(,)?) => {
        core::arch::global_asm!(
            concat!(".pushsection .text.pathprof_interpose,\"ax\",", $progbits),
            trampoline!("_exit", "exit"),
            trampoline!("_Exit", "exit"),
            trampoline!("execve", "execve"),
            trampoline!("execv", "execv"),
            trampoline!("execvp", "execvp"),
            trampoline!("execvpe", "execvpe"),
            trampoline!("fexecve", "fexecve"),
            trampoline!("abort", "abort"),
            trampoline!("pthread_create", "pthread_create"),
            trampoline!("daemon", "daemon"),
            execl_trampoline!("execl", "0"),
            execl_trampoline!("execle", "1"),
            execl_trampoline!("execlp", "2"),
            $($execl_common,)*
            ".popsection",
            exit = sym hook_exit,
            execve = sym hook_execve,
            execv = sym hook_execv,
            execvp = sym hook_execvp,
            execvpe = sym hook_execvpe,
            fexecve = sym hook_fexecve,
            abort = sym hook_abort,
            pthread_create = sym hook_pthread_create,
            daemon = sym hook_daemon,
            execl = sym hook_execl,
        );
    };
}

#[cfg(target_arch = "x86_64")]
macro_rules! trampoline {
    ($name:literal, $hook:literal) => {
        concat!(
            ".p2align 4\n.weak ",
            $name,
            "\n.type ",
            $name,
            ",@function\n",
            $name,
            ":\n",
            "endbr64\njmp {",
            $hook,
            "}@PLT\n.size ",
            $name,
            ", .-",
            $name,
            "\n"
        )
    };
}

#[cfg(target_arch = "x86_64")]
macro_rules! execl_trampoline {
    ($name:literal, $kind:literal) => {
        concat!(
            ".p2align 4\n.weak ",
            $name,
            "\n.type ",
            $name,
            ",@function\n",
            $name,
            ":\n",
            "endbr64\nmov r11d, ",
            $kind,
            "\njmp .Lpathprof_execl_common\n.size ",
            $name,
            ", .-",
            $name,
            "\n"
        )
    };
}

#[cfg(target_arch = "x86_64")]
interpose_asm!(
    "@progbits",
    // The 5 argument registers after the path side by side, then the call.
    ".p2align 4",
    ".Lpathprof_execl_common:",
    "push rbp",
    "mov rbp, rsp",
    "sub rsp, 48",
    "mov qword ptr [rsp], rsi",
    "mov qword ptr [rsp + 8], rdx",
    "mov qword ptr [rsp + 16], rcx",
    "mov qword ptr [rsp + 24], r8",
    "mov qword ptr [rsp + 32], r9",
    "mov rsi, rdi",
    "mov edi, r11d",
    "mov rdx, rsp",
    "lea rcx, [rbp + 16]",
    "call {execl}@PLT",
    "leave",
    "ret",
);

#[cfg(target_arch = "aarch64")]
macro_rules! trampoline {
    ($name:literal, $hook:literal) => {
        concat!(
            ".p2align 4\n.weak ",
            $name,
            "\n.type ",
            $name,
            ",%function\n",
            $name,
            ":\n",
            "hint #34\nb {",
            $hook,
            "}\n.size ",
            $name,
            ", .-",
            $name,
            "\n"
        )
    };
}

#[cfg(target_arch = "aarch64")]
macro_rules! execl_trampoline {
    ($name:literal, $kind:literal) => {
        concat!(
            ".p2align 4\n.weak ",
            $name,
            "\n.type ",
            $name,
            ",%function\n",
            $name,
            ":\n",
            "hint #34\nmov x9, #",
            $kind,
            "\nb .Lpathprof_execl_common\n.size ",
            $name,
            ", .-",
            $name,
            "\n"
        )
    };
}

#[cfg(target_arch = "aarch64")]
interpose_asm!(
    "%progbits",
    // The 7 argument registers after the path side by side, then the call.
    ".p2align 4",
    ".Lpathprof_execl_common:",
    "stp x29, x30, [sp, #-80]!",
    "mov x29, sp",
    "stp x1, x2, [sp, #16]",
    "stp x3, x4, [sp, #32]",
    "stp x5, x6, [sp, #48]",
    "str x7, [sp, #64]",
    "mov x1, x0",
    "mov x0, x9",
    "add x2, sp, #16",
    "add x3, sp, #80",
    "bl {execl}",
    "ldp x29, x30, [sp], #80",
    "ret",
);
