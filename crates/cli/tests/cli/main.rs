//! The `pathprof` command's tests, one test binary (`cargo test -p pathprof
//! --test cli`; a part by its module, e.g. `--test cli e2e`). One module per
//! subject, sharing [`support`]:
//!
//! - [`continuous`]: continuous mode: processes killed with SIGKILL lose
//!   nothing;
//! - [`driver`]: the compiler wrapper as build systems use it;
//! - [`e2e`]: the programs of `tests/programs/` in every mode, counts by hand;
//! - [`footprint`]: what the runtime costs a program: code, thread memory,
//!   static thread-local data, many `dlopen`ed libraries;
//! - [`p3`]: partitioned path profiling: K copies built, run in parallel and
//!   merged into path mode's profile (bzip2 too: a `third_party` test);
//! - [`pgo`]: optimised builds from profiles (`--profile-use`, `pathprof
//!   index`), every branch's weights by hand;
//! - [`probe_code`]: the machine code of probes (one instruction each);
//! - [`projects`]: the projects of `tests/projects/`, built step by step;
//! - [`rust`]: Rust programs built with `pathprof cargo`
//!   (`tests/projects/rustprog`), in every mode, counts by hand;
//! - [`reports_dot`], [`reports_html`], [`reports_lcov`],
//!   [`reports_predict_diff`]: those reports on the fixtures of
//!   `tests/reports_fixtures/`;
//! - [`text_reports`]: golden text reports of `tests/text_reports/classify.c`;
//! - [`third_party`]: real third-party programs and their own builds (slow:
//!   `--skip third_party` leaves them out);
//! - [`time_report`]: `--time-report`'s table of each phase's time.

mod support;

mod continuous;
mod driver;
mod e2e;
mod footprint;
mod p3;
mod pgo;
mod probe_code;
mod projects;
mod reports_dot;
mod reports_html;
mod reports_lcov;
mod reports_predict_diff;
mod rust;
mod text_reports;
mod third_party;
mod time_report;
