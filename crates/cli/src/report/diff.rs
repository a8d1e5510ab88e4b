//! `pathprof diff` (placeholder until implemented).
use super::load::Loaded;
pub fn report(_a: &Loaded, _b: &Loaded) -> anyhow::Result<String> {
    anyhow::bail!("diff is not implemented yet")
}
