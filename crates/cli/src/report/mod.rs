//! Reports: everything a person or a tool reads from a map and a profile. Each
//! module renders one report from a [`load::Loaded`] (`info` from profile
//! files alone); none needs LLVM.

pub mod coverage;
pub mod diff;
pub mod dot;
pub mod funcs;
pub mod html;
pub mod info;
pub mod json;
pub mod lcov;
pub mod lines;
pub mod listing;
pub mod load;
pub mod paths;
pub mod predict;
pub mod source;
pub mod summary;
pub mod verify;
