//! The raw profile file format (to be written).
