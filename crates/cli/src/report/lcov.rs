//! `pathprof export --format lcov` (placeholder until implemented).
use super::load::Loaded;
use super::source::SourceRoot;
pub fn export(_l: &Loaded, _s: &SourceRoot) -> anyhow::Result<String> {
    anyhow::bail!("lcov export is not implemented yet")
}
