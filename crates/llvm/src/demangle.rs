//! The name a person reads for a function's linkage name: Rust names through
//! `rustc-demangle` (legacy `_ZN…17h<hash>E` and v0 `_R…`, shown without the
//! hash), Itanium C++ names (`_Z…`) through the C++ runtime's
//! `__cxa_demangle` (which LLVM links anyway) rather than the `cpp_demangle`
//! crate, which spells some names differently from the C++ runtime, a few
//! with wrong parameter lists (template constructors,
//! gimli-rs/cpp_demangle#129; `T&&...` packs; empty packs).

use std::fmt::Write;

/// The demangled form of `name`, or `None` for names that are not mangled (C)
/// and names the demanglers reject.
pub(crate) fn demangle(name: &str) -> Option<String> {
    let shown = if name.starts_with("_R") {
        rust(name)?
    } else if !name.starts_with("_Z") {
        return None;
    } else if is_legacy_rust(name) {
        rust(name).or_else(|| cpp(name))?
    } else {
        cpp(name)?
    };
    (shown != name).then_some(shown)
}

/// A Rust name in its alternate form (`crate::module::function`, no hash, no
/// crate disambiguator).
fn rust(name: &str) -> Option<String> {
    let demangled = rustc_demangle::try_demangle(name).ok()?;
    let mut shown = String::new();
    write!(shown, "{demangled:#}").ok()?;
    Some(shown)
}

/// An Itanium C++ name as libstdc++ (or libc++) prints it.
fn cpp(name: &str) -> Option<String> {
    crate::ffi::cxa_demangle(name)
}

/// Whether `name` has the shape of a legacy Rust name: `_ZN`, path elements,
/// and the hash element `17h` and 16 hex digits before the closing `E`,
/// perhaps followed by a `.suffix` that LLVM added. (Path elements may hold
/// dots themselves: `_$LT$core..hash..Hasher$GT$`.)
fn is_legacy_rust(name: &str) -> bool {
    let Some(path) = name.strip_prefix("_ZN") else {
        return false;
    };
    path.match_indices("17h").any(|(at, _)| {
        let rest = &path.as_bytes()[at + 3..];
        rest.len() > 16
            && rest[..16].iter().all(u8::is_ascii_hexdigit)
            && rest[16] == b'E'
            && rest.get(17).is_none_or(|&c| c == b'.')
    })
}

/// The shown names of `names` (each `name`'s [`demangle`]d form), told
/// apart: Rust functions that demangle alike are shown with their hash
/// (legacy names: `…::drop::h5088f4ac71350c54`) or crate disambiguators (v0
/// names). Legacy mangling does not spell a generic function's arguments,
/// so its instances would otherwise all read the same.
pub(crate) fn shown_names(names: &[&str]) -> Vec<Option<String>> {
    let mut shown: Vec<Option<String>> = names.iter().map(|n| demangle(n)).collect();
    let mut seen: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for s in shown.iter().flatten() {
        *seen.entry(s.as_str()).or_default() += 1;
    }
    let alike: Vec<bool> = shown
        .iter()
        .map(|s| s.as_deref().is_some_and(|s| seen[s] > 1))
        .collect();
    for ((name, s), alike) in names.iter().zip(&mut shown).zip(alike) {
        if alike && (name.starts_with("_R") || is_legacy_rust(name)) {
            if let Ok(full) = rustc_demangle::try_demangle(name) {
                *s = Some(full.to_string());
            }
        }
    }
    shown
}

#[cfg(test)]
mod tests {
    use super::demangle;

    #[track_caller]
    fn check(pairs: &[(&str, &str)]) {
        for (mangled, shown) in pairs {
            assert_eq!(demangle(mangled).as_deref(), Some(*shown), "{mangled}");
        }
    }

    /// Pairs as libstdc++'s `__cxa_demangle` prints them, from clang 22
    /// objects: the e2e programs' names and templates, operators, std::
    /// types, lambdas, constructors and destructors.
    #[test]
    fn cpp_names() {
        check(&[
            ("_Z10total_areaPKP5Shapei", "total_area(Shape* const*, int)"),
            ("_Z5twiceIiET_S0_", "int twice<int>(int)"),
            ("_Z5twiceIlET_S0_", "long twice<long>(long)"),
            ("_ZNK6Square4areaEv", "Square::area() const"),
            ("_ZN4RectC2Ell", "Rect::Rect(long, long)"),
            ("_ZN5ShapeD0Ev", "Shape::~Shape()"),
            ("_ZN5PointC1EOS_", "Point::Point(Point&&)"),
            ("_ZN2ns3BoxIiLi3EEixEi", "ns::Box<int, 3>::operator[](int)"),
            (
                "_ZN2ns3BoxIiLi3EEpLERKS1_",
                "ns::Box<int, 3>::operator+=(ns::Box<int, 3> const&)",
            ),
            (
                "_ZNK2ns3BoxIiLi3EEcvbEv",
                "ns::Box<int, 3>::operator bool() const",
            ),
            ("_ZltN5PointES_", "operator<(Point, Point)"),
            (
                "_ZnwmRKSt9nothrow_t",
                "operator new(unsigned long, std::nothrow_t const&)",
            ),
            ("_ZN2ns10overloadedElz", "ns::overloaded(long, ...)"),
            ("_Z3fooPFviEPA3_i", "foo(void (*)(int), int (*) [3])"),
            (
                "_ZN12_GLOBAL__N_14Anon1fEi",
                "(anonymous namespace)::Anon::f(int)",
            ),
            ("_ZL11localstaticv", "localstatic()"),
            (
                "_ZNSt6vectorIiSaIiEE9push_backERKi",
                "std::vector<int, std::allocator<int> >::push_back(int const&)",
            ),
            (
                "_ZNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEE6appendEPKc",
                "std::__cxx11::basic_string<char, std::char_traits<char>, \
                 std::allocator<char> >::append(char const*)",
            ),
            (
                "_ZNKSt8functionIFiiEEclEi",
                "std::function<int (int)>::operator()(int) const",
            ),
            (
                "_Z5applyIZ4mainE3$_0EiT_i",
                "int apply<main::$_0>(main::$_0, int)",
            ),
            (
                "_ZZN1S1fEvENK3$_0clEi",
                "S::f()::$_0::operator()(int) const",
            ),
            (
                "_ZZN1S1gEvENKUlT_E_clIiEEDaS0_",
                "auto S::g()::{lambda(auto:1)#1}::operator()<int>(int) const",
            ),
            ("_Z3foov.cold", "foo() [clone .cold]"),
        ]);
    }

    /// Rust names: legacy (with the hash left out) and v0 (without the crate
    /// disambiguator), from rustc 1.95 objects.
    #[test]
    fn rust_names() {
        check(&[
            ("_ZN4demo3run17h2b25494d526b4f2fE", "demo::run"),
            ("_ZN4demo6shapes4area17hbfc0cbe60a191a4cE", "demo::shapes::area"),
            (
                "_ZN4demo16Counter$LT$T$GT$10push_twice17hf2f58c388ade00e2E",
                "demo::Counter<T>::push_twice",
            ),
            ("_ZN4demo3run17h2b25494d526b4f2fE.llvm.1234", "demo::run"),
            (
                "_ZN71_$LT$core..hash..sip..Hasher$LT$S$GT$$u20$as$u20$core..hash..Hasher$GT$5write17h5088f4ac71350c54E",
                "<core::hash::sip::Hasher<S> as core::hash::Hasher>::write",
            ),
            (
                "_ZN4core3ptr85drop_in_place$LT$std..rt..lang_start$LT$$LP$$RP$$GT$..$u7b$$u7b$closure$u7d$$u7d$$GT$17h0c1b2a3d4e5f6789E.llvm.99",
                "core::ptr::drop_in_place<std::rt::lang_start<()>::{{closure}}>",
            ),
            ("_RNvCsauMP1AnkCw5_4demo3run", "demo::run"),
            ("_RNvNtCsauMP1AnkCw5_4demo6shapes4area", "demo::shapes::area"),
            (
                "_RNvMCsauMP1AnkCw5_4demoINtB2_7CountermE10push_twiceB2_",
                "<demo::Counter<u32>>::push_twice",
            ),
            (
                "_RNvMs4_NtCslNYArtu3iFV_5alloc7raw_vecNtB5_11RawVecInner14grow_amortizedCsauMP1AnkCw5_4demo",
                "<alloc::raw_vec::RawVecInner>::grow_amortized",
            ),
        ]);
    }

    /// Instances of one generic function read alike under legacy mangling:
    /// they are shown with their hashes; other names are left as they are.
    #[test]
    fn rust_instances_that_read_alike_are_told_apart() {
        let names = [
            "_ZN4core3ptr13drop_in_place17h1111111111111111E",
            "_ZN4core3ptr13drop_in_place17h2222222222222222E",
            "_ZN4demo3run17h2b25494d526b4f2fE",
            "main",
        ];
        assert_eq!(
            super::shown_names(&names),
            [
                Some("core::ptr::drop_in_place::h1111111111111111".to_string()),
                Some("core::ptr::drop_in_place::h2222222222222222".to_string()),
                Some("demo::run".to_string()),
                None,
            ]
        );
    }

    #[test]
    fn other_names_are_left_alone() {
        for name in ["main", "area", "_Zgarbage", "_RNotRust", ""] {
            assert_eq!(demangle(name), None, "{name}");
        }
        // Linkage names are bytes: a non-ASCII one is no reason to panic.
        assert_eq!(
            demangle("_ZN3f\u{e9}\u{e9}\u{e9}\u{e9}\u{e9}\u{e9}\u{e9}\u{e9}\u{e9}\u{e9}E"),
            None
        );
        // A C++ name whose last element looks like a Rust hash is still C++.
        assert_eq!(
            demangle("_ZN1a17h0123456789abcdefEv").as_deref(),
            Some("a::h0123456789abcdef()")
        );
    }
}
