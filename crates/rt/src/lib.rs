//! The pathprof runtime (to be written).
