//! How many bytes a piece of work held at its peak: the test binary's allocator counts, per
//! thread, the bytes live at each moment and the most there were, so a reader run in a
//! thread of its own can be held to a stated cap however many other tests run beside it.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::mpsc;
use std::time::Duration;

/// The system allocator, counting.
pub struct Counting;

#[global_allocator]
static COUNTING: Counting = Counting;

thread_local! {
    static LIVE: Cell<isize> = const { Cell::new(0) };
    static PEAK: Cell<isize> = const { Cell::new(0) };
}

fn add(bytes: isize) {
    let _ = LIVE.try_with(|live| {
        let now = live.get() + bytes;
        live.set(now);
        let _ = PEAK.try_with(|peak| peak.set(peak.get().max(now)));
    });
}

fn signed(bytes: usize) -> isize {
    isize::try_from(bytes).unwrap_or(isize::MAX)
}

// SAFETY: every call is passed to the system allocator unchanged; the counting beside it
// allocates nothing.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let ptr = unsafe { System.alloc(layout) };
        if !ptr.is_null() {
            add(signed(layout.size()));
        }
        ptr
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let ptr = unsafe { System.alloc_zeroed(layout) };
        if !ptr.is_null() {
            add(signed(layout.size()));
        }
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        add(-signed(layout.size()));
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let moved = unsafe { System.realloc(ptr, layout, new_size) };
        if !moved.is_null() {
            add(signed(new_size) - signed(layout.size()));
        }
        moved
    }
}

/// Runs `work` in a thread of its own: its answer and the most bytes that thread held at
/// once, or `None` when it did not return within `deadline` (the thread is left behind).
pub fn measured<T: Send + 'static>(
    deadline: Duration,
    work: impl FnOnce() -> T + Send + 'static,
) -> Option<(T, usize)> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let start = LIVE.with(Cell::get);
        PEAK.with(|peak| peak.set(start));
        let answer = work();
        let peak = PEAK.with(Cell::get) - start;
        let _ = tx.send((answer, usize::try_from(peak).unwrap_or(0)));
    });
    rx.recv_timeout(deadline).ok()
}
