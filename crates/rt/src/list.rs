//! [`List`]: a lock-free, append-only list of nodes that are never freed,
//! for what the runtime keeps for the life of the process (modules,
//! regions, thread blocks) and the dumper walks without locks, also in a
//! signal handler. The list holds the links: its items need none.

use core::ptr;
use core::sync::atomic::{AtomicPtr, Ordering::*};

/// One item and the link to the next one.
struct Entry<T> {
    item: T,
    next: *mut Entry<T>,
}

/// The list's head; items are pushed in front.
pub(crate) struct List<T>(AtomicPtr<Entry<T>>);

impl<T: 'static> List<T> {
    pub(crate) const fn new() -> Self {
        List(AtomicPtr::new(ptr::null_mut()))
    }

    /// Puts `item` first, for good (it is never freed), and returns it.
    /// Allocates (and aborts without memory, see [`crate::heap`]): not for
    /// signal handlers.
    pub(crate) fn push(&self, item: T) -> &'static T {
        let entry = crate::heap::boxed(Entry {
            item,
            next: ptr::null_mut(),
        })
        .unwrap_or_else(|| crate::heap::out_of_memory())
        .as_ptr();
        let mut head = self.0.load(Acquire);
        loop {
            // Safety: the entry is ours until published.
            unsafe { (*entry).next = head };
            match self.0.compare_exchange_weak(head, entry, AcqRel, Acquire) {
                // Safety: published complete, never freed.
                Ok(_) => return unsafe { &(*entry).item },
                Err(h) => head = h,
            }
        }
    }

    /// Every item, newest first.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &'static T> {
        let mut p = self.0.load(Acquire);
        core::iter::from_fn(move || {
            // Safety: entries are published complete and never freed.
            let e: &'static Entry<T> = unsafe { p.as_ref()? };
            p = e.next;
            Some(&e.item)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pushes_come_first_and_stay() {
        let list: List<u32> = List::new();
        assert_eq!(list.iter().count(), 0);
        let first = list.push(1);
        list.push(2);
        assert_eq!(list.iter().copied().collect::<Vec<_>>(), [2, 1]);
        assert!(ptr::eq(list.iter().last().unwrap(), first));
    }
}
