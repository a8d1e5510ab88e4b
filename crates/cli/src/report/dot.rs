//! `pathprof dot` (placeholder until implemented).
use super::load::Loaded;
use pathprof_core::map::MapFile;
pub fn render(_m: &MapFile, _f: &str, _l: Option<&Loaded>) -> anyhow::Result<String> {
    anyhow::bail!("dot is not implemented yet")
}
pub fn write_all(_m: &MapFile, _d: &std::path::Path) -> anyhow::Result<()> {
    anyhow::bail!("dot is not implemented yet")
}
