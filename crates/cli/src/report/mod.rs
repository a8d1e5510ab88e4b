//! Reports: the renderers of what a person or a tool reads from a map and a
//! profile. Each module renders one report from a [`load::Loaded`] and the
//! totals `pathprof_report` computes from it (`info` from profile files
//! alone); none needs LLVM. The JSON report is `pathprof_report::json`.

pub mod coverage;
pub mod diff;
pub mod dot;
pub mod funcs;
pub mod html;
pub mod info;
pub mod lcov;
pub mod listing;
pub mod p3;
pub mod paths;
pub mod ppp;
pub mod predict;
pub mod source;
pub mod summary;
pub mod verify;

pub(crate) use pathprof_report::percent;
pub use pathprof_report::{lines, load};
