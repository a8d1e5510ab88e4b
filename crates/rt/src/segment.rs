//! The GS base: where an executable's probes increment their slots and path
//! arrays on x86-64 (`PpModule::segment`: `incq %gs:counter(%rip)`, one
//! instruction and no register). The runtime sets each thread's GS base to
//! the thread's delta for the executable (0: the counters themselves), with
//! `wrgsbase` where the kernel allows it (`HWCAP2_FSGSBASE`, Linux 5.9 on),
//! else `arch_prctl(ARCH_SET_GS)`. A new thread inherits its creator's base
//! until the runtime sets it (`threads::start_thread`), so a thread the
//! runtime did not start (a raw `clone`) counts in its creator's copy.

use core::sync::atomic::{AtomicBool, Ordering::Relaxed};

/// Said once: the base could not be set.
static WARNED: AtomicBool = AtomicBool::new(false);

/// `AT_HWCAP2`'s bit for `rdgsbase`/`wrgsbase` enabled by the kernel.
#[cfg(target_arch = "x86_64")]
const HWCAP2_FSGSBASE: libc::c_ulong = 1 << 1;

/// Whether the kernel lets this process use `rdgsbase`/`wrgsbase`.
#[cfg(target_arch = "x86_64")]
fn fsgsbase() -> bool {
    // Safety: getauxval has no preconditions.
    (unsafe { libc::getauxval(libc::AT_HWCAP2) } & HWCAP2_FSGSBASE) != 0
}

/// Sets the calling thread's GS base to `delta`; says once on stderr when
/// it cannot (the thread then counts wherever its base points: the counters
/// themselves in a thread that never had one set).
pub(crate) fn set_gs_base(delta: isize) {
    if !try_set(delta) && !WARNED.swap(true, Relaxed) {
        crate::msg::Line::new()
            .text(
                "cannot set a thread's GS base, where the executable's probes count: its \
                 threads count into shared counters, and counts are lost where they run \
                 at once; build with --atomic for exact counts",
            )
            .emit();
    }
}

/// Says once on stderr when the calling thread's GS base is not `delta`,
/// where the runtime set it: the program changed it, and what the
/// executable's probes counted in this thread since went where it points.
pub(crate) fn check_gs_base(delta: isize) {
    static SAID: AtomicBool = AtomicBool::new(false);
    if read().is_some_and(|base| base != delta) && !SAID.swap(true, Relaxed) {
        crate::msg::Line::new()
            .text(
                "the program changed a thread's GS base, where the executable's probes \
                 count: that thread's counts since then went where it points, and are lost \
                 unless it is 0; build with --atomic for such a program",
            )
            .emit();
    }
}

/// The calling thread's GS base, where it can be read.
#[cfg(target_arch = "x86_64")]
fn read() -> Option<isize> {
    const ARCH_GET_GS: libc::c_long = 0x1004;
    if fsgsbase() {
        let base: isize;
        // Safety: the kernel enabled the instruction (`rdgsbase %rax`).
        unsafe {
            core::arch::asm!(
                ".byte 0xf3, 0x48, 0x0f, 0xae, 0xc8",
                out("rax") base,
                options(nostack, preserves_flags)
            )
        };
        return Some(base);
    }
    let mut base: isize = 0;
    // Safety: arch_prctl writes this thread's GS base into `base`.
    let ok = unsafe { libc::syscall(libc::SYS_arch_prctl, ARCH_GET_GS, &mut base) } == 0;
    ok.then_some(base)
}

#[cfg(not(target_arch = "x86_64"))]
fn read() -> Option<isize> {
    None
}

#[cfg(target_arch = "x86_64")]
fn try_set(delta: isize) -> bool {
    const ARCH_SET_GS: libc::c_long = 0x1001;
    if fsgsbase() {
        // Safety: the kernel enabled the instruction (HWCAP2_FSGSBASE); it
        // sets this thread's GS base only (`wrgsbase %rax`, spelled in bytes
        // so that no target feature is needed to assemble it).
        unsafe {
            core::arch::asm!(
                ".byte 0xf3, 0x48, 0x0f, 0xae, 0xd8",
                in("rax") delta,
                options(nostack, preserves_flags)
            )
        };
        return true;
    }
    // Safety: arch_prctl with a value; it sets this thread's GS base.
    unsafe { libc::syscall(libc::SYS_arch_prctl, ARCH_SET_GS, delta) == 0 }
}

#[cfg(not(target_arch = "x86_64"))]
fn try_set(_: isize) -> bool {
    false
}
