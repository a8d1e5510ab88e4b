//! Text formatting for the HTML report: grouped numbers, plurals,
//! percentages and coverage bars.

use maud::{html, Markup};

/// `1234567` as `1,234,567`.
pub(super) fn num(n: u128) -> String {
    let s = n.to_string();
    let digits = s.as_bytes();
    let head = match digits.len() % 3 {
        0 => 3.min(digits.len()),
        k => k,
    };
    let mut out = s[..head].to_string();
    for group in digits[head..].chunks(3) {
        out.push(',');
        out.push_str(std::str::from_utf8(group).expect("ASCII digits"));
    }
    out
}

/// `1 block`, `2 blocks`.
pub(super) fn plural(n: u128, what: &str) -> String {
    format!("{} {what}{}", num(n), if n == 1 { "" } else { "s" })
}

pub(super) fn pct(a: u128, b: u128) -> String {
    if b == 0 {
        "–".into()
    } else {
        format!("{:.1}%", 100.0 * a as f64 / b as f64)
    }
}

/// A small coverage bar and its percentage.
pub(super) fn bar(run: u128, all: u128) -> Markup {
    let p = if all == 0 {
        0.0
    } else {
        100.0 * run as f64 / all as f64
    };
    html! {
        span.bar { span style=(format!("width:{p:.0}%")) {} }
        " " (pct(run, all))
    }
}
