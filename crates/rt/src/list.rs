//! [`List`]: a lock-free, append-only list of nodes that are never freed,
//! for what the runtime keeps for the life of the process (modules,
//! regions, thread blocks) and the dumper walks without locks, also in a
//! signal handler.

use std::ptr;
use std::sync::atomic::{AtomicPtr, Ordering::*};

/// A node of a [`List`]: it holds the link to the next one.
pub(crate) trait Linked: Sized + 'static {
    fn next(&self) -> *mut Self;
    fn set_next(&mut self, next: *mut Self);
}

/// The list's head; nodes are pushed in front.
pub(crate) struct List<T>(AtomicPtr<T>);

impl<T: Linked> List<T> {
    pub(crate) const fn new() -> Self {
        List(AtomicPtr::new(ptr::null_mut()))
    }

    /// Puts `node` first, for good (it is never freed), and returns it.
    /// Allocates: not for signal handlers.
    pub(crate) fn push(&self, node: T) -> &'static T {
        let node = Box::into_raw(Box::new(node));
        let mut head = self.0.load(Acquire);
        loop {
            // Safety: the node is ours until published.
            unsafe { (*node).set_next(head) };
            match self.0.compare_exchange_weak(head, node, AcqRel, Acquire) {
                // Safety: published complete, never freed.
                Ok(_) => return unsafe { &*node },
                Err(h) => head = h,
            }
        }
    }

    /// Every node, newest first.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &'static T> {
        let mut p = self.0.load(Acquire);
        std::iter::from_fn(move || {
            // Safety: nodes are published complete and never freed.
            let n = unsafe { p.as_ref()? };
            p = n.next();
            Some(n)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct N(u32, *mut N);
    impl Linked for N {
        fn next(&self) -> *mut N {
            self.1
        }
        fn set_next(&mut self, next: *mut N) {
            self.1 = next;
        }
    }

    #[test]
    fn pushes_come_first_and_stay() {
        let list: List<N> = List::new();
        assert_eq!(list.iter().count(), 0);
        let first = list.push(N(1, ptr::null_mut()));
        list.push(N(2, ptr::null_mut()));
        assert_eq!(list.iter().map(|n| n.0).collect::<Vec<_>>(), [2, 1]);
        assert!(ptr::eq(list.iter().last().unwrap(), first));
    }
}
