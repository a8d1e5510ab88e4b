//! Intentionally empty: this crate only names third-party C sources (see Cargo.toml).
