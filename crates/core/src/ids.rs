//! Dense `u32` index newtypes for blocks, edges and functions, with short debug
//! forms (`b3`, `e7`, `f2`), and `IndexVec`-free helpers for side tables.
//!
//! Invariant: ids of one graph are dense in `0..N`; side tables are plain `Vec`s
//! indexed with [`BlockId::index`] and friends.

macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident, $prefix:literal) => {
        $(#[$doc])*
        #[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub struct $name(pub u32);

        impl $name {
            /// The id as a `usize`, for indexing side tables.
            #[inline]
            pub fn index(self) -> usize {
                self.0 as usize
            }

            /// The id for a side-table index.
            ///
            /// # Panics
            /// When `index` does not fit in `u32`.
            #[inline]
            pub fn new(index: usize) -> Self {
                Self(u32::try_from(index).expect("id overflows u32"))
            }
        }

        impl ::std::fmt::Debug for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                write!(f, concat!($prefix, "{}"), self.0)
            }
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                ::std::fmt::Debug::fmt(self, f)
            }
        }
    };
}
/// For the dense ids of other graphs in this crate.
pub(crate) use id_type;

id_type!(
    /// A basic block of one function: its index in the function as linked.
    BlockId,
    "b"
);
id_type!(
    /// A CFG edge of one function: its index in [`crate::Cfg::edges`].
    EdgeId,
    "e"
);
id_type!(
    /// A function of one module: its index in the map file.
    FuncId,
    "f"
);
id_type!(
    /// A node of a path-profiling DAG (CFG blocks, then the virtual ENTRY and EXIT).
    NodeId,
    "n"
);
id_type!(
    /// An edge of a path-profiling DAG.
    DagEdgeId,
    "d"
);
