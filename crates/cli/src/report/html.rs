//! `pathprof html` (placeholder until implemented).
use super::load::Loaded;
use super::source::SourceRoot;
pub fn write(_l: &Loaded, _d: &std::path::Path, _s: &SourceRoot) -> anyhow::Result<()> {
    anyhow::bail!("html is not implemented yet")
}
