//! The LLVM side of pathprof (to be written).
