//! The library the program and its tests share.
use rustprog_macros::Describe;
include!(concat!(env!("OUT_DIR"), "/generated.rs"));

#[derive(Debug, Describe)]
pub enum Shape {
    Circle(u32),
    Square(u32),
    Tri(u32, u32),
}

/// The area, rounded down.
///
/// ```
/// assert_eq!(rustprog::area(&rustprog::Shape::Square(3)), 9);
/// ```
#[inline(never)]
pub fn area(s: &Shape) -> u32 {
    match s {
        Shape::Circle(r) => 3 * r * r,
        Shape::Square(a) => a * a,
        Shape::Tri(b, h) => b * h / 2,
    }
}

#[inline(never)]
pub fn parse(s: &str) -> Result<u32, String> {
    let n: u32 = s.trim().parse().map_err(|_| format!("bad {s}"))?;
    if n > 100 {
        return Err("big".into());
    }
    Ok(n * 2)
}

#[inline(never)]
pub fn risky(n: u32) -> u32 {
    if n % 4 == 3 {
        panic!("three");
    }
    n + 1
}

/// The largest of `xs` (not empty): one function, two instances.
#[inline(never)]
pub fn largest<T: PartialOrd + Copy>(xs: &[T]) -> T {
    let mut max = xs[0];
    for &x in xs {
        if x > max {
            max = x;
        }
    }
    max
}

pub fn fib(n: u32) -> u32 {
    if n < 2 {
        n
    } else {
        fib(n - 1) + fib(n - 2)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn fib_of_ten() {
        assert_eq!(super::fib(10), 55);
    }
}
