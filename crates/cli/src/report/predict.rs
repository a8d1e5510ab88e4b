//! `pathprof predict` (placeholder until implemented).
use super::load::Loaded;
pub fn report(_l: &Loaded) -> anyhow::Result<String> {
    anyhow::bail!("predict is not implemented yet")
}
