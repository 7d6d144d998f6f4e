//! No memory is kept behind the caller's back: a dropped output goes back to the allocator,
//! and reuse happens only through an [`OutputArena`] the caller owns. In its own test binary,
//! since it counts the process's live heap bytes (a counting global allocator) and other
//! tests' allocations would move the count.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, Ordering};
use std::sync::Mutex;

use wgpu_pad::{cpu, reference, DataType, Mode, OutputArena, PadPlan, PadRequest, Tensor};

/// The system allocator, counting the bytes live.
struct Counting;

static LIVE: AtomicIsize = AtomicIsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size() as isize, Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size() as isize, Ordering::Relaxed);
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LIVE.fetch_add(new_size as isize - layout.size() as isize, Ordering::Relaxed);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// The tests here count the whole process's bytes: one at a time.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn live() -> isize {
    LIVE.load(Ordering::Relaxed)
}

const MIB: isize = 1 << 20;

/// Pads with 20 MiB outputs, threaded and not, every mode, dropped: the live bytes come back
/// to within a little of where they were (thread-local and lazily made statics aside), not
/// a 20 MiB buffer more.
#[test]
fn dropped_outputs_keep_no_memory() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let shape = [1024, 20476];
    let x = Tensor::from_bytes(DataType::Uint8, shape.to_vec(), (0..1024 * 20476).map(|i| (i % 253) as u8).collect())
        .unwrap();
    // A first pad, so that whatever is made once (the thread count, thread stacks' lazily
    // made statics) is not counted.
    let plan = PadPlan::new(DataType::Uint8, &shape, &PadRequest::new(vec![0, 2, 0, 2])).unwrap();
    drop(cpu::pad(&plan, &x).unwrap());
    let before = live();
    for threads in [1, 2] {
        cpu::set_max_threads(threads);
        for mode in Mode::ALL {
            let plan = PadPlan::new(DataType::Uint8, &shape, &PadRequest::new(vec![0, 2, 0, 2]).mode(mode)).unwrap();
            let y = cpu::pad(&plan, &x).unwrap();
            assert!(live() - before >= 20 * MIB, "the output is live while held");
            drop(y);
            assert!(live() - before < MIB, "{mode}, {threads} threads: {} bytes kept after the drop", live() - before);
        }
    }
}

/// Outputs given back to an arena are reused (same memory) by the next pad of that size,
/// which still writes every byte (junk first, then each other's outputs, constant 0
/// included); the arena keeps within its limit, and its memory goes with it.
#[test]
fn arenas_reuse_what_they_are_given_and_free_it_when_dropped() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let before = live();
    let arena = OutputArena::new(64 << 20);
    let n = 20 << 20;
    let junk = Tensor::from_bytes(DataType::Uint8, vec![n], vec![0xAA; n]).unwrap();
    let junk_at = junk.bytes().unwrap().as_ptr();
    arena.recycle(junk);
    assert_eq!(arena.held_bytes(), n as u64);

    let shape = [1024, 20476];
    let x = Tensor::from_bytes(DataType::Uint8, shape.to_vec(), (0..1024 * 20476).map(|i| (i % 253) as u8).collect())
        .unwrap();
    for (i, mode) in Mode::ALL.into_iter().enumerate() {
        let plan = PadPlan::new(DataType::Uint8, &shape, &PadRequest::new(vec![0, 2, 0, 2]).mode(mode)).unwrap();
        let y = cpu::pad_in(&plan, &x, &arena).unwrap();
        if i == 0 {
            assert_eq!(y.bytes().unwrap().as_ptr(), junk_at, "the given-back buffer was not reused");
        }
        assert_eq!(arena.held_bytes(), 0, "{mode}: the buffer is the output's now");
        assert!(y == reference::pad(&plan, &x), "{mode} on a reused buffer");
        arena.recycle(y);
    }
    drop(x);

    // Within the limit, oldest out first; released on request; nothing at 0.
    let big = |b: u8| Tensor::from_bytes(DataType::Uint8, vec![n], vec![b; n]).unwrap();
    arena.release();
    arena.set_limit(30 << 20);
    arena.recycle(big(1));
    arena.recycle(big(2));
    assert_eq!(arena.held_bytes(), n as u64, "two 20 MiB buffers given under a 30 MiB limit");
    arena.set_limit(0);
    assert_eq!(arena.held_bytes(), 0);
    arena.recycle(big(3));
    assert_eq!(arena.held_bytes(), 0);
    arena.set_limit(64 << 20);
    arena.recycle(big(4));
    assert_eq!(arena.held_bytes(), n as u64);
    drop(arena);
    assert!(live() - before < MIB, "{} bytes live after the arena went", live() - before);
}

/// The gradient given an arena (`cpu::pad_backward_in`) writes into the buffer given back,
/// every byte (junk there first), the bits of `pad_backward`'s fresh one; without a fitting
/// buffer it takes fresh memory, as `pad_backward` does.
#[test]
fn gradients_reuse_an_arenas_memory() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let arena = OutputArena::new(64 << 20);
    // 16 MiB of f32: the arena keeps buffers of 16 MiB and more.
    let shape = [1024, 4096];
    let n = 1024 * 4096 * 4;
    let junk = Tensor::from_bytes(DataType::Uint8, vec![n], vec![0xAA; n]).unwrap();
    let junk_at = junk.bytes().unwrap().as_ptr();
    arena.recycle(junk);
    for (i, mode) in Mode::ALL.into_iter().enumerate() {
        let plan = PadPlan::new(DataType::Float32, &shape, &PadRequest::new(vec![2, 3, 1, 4]).mode(mode)).unwrap();
        let g: Vec<f32> = (0..plan.out_len()).map(|k| ((k % 1013) as f32 * 0.731).sin()).collect();
        let grad_out = Tensor::from_slice(DataType::Float32, plan.out_shape().to_vec(), &g).unwrap();
        let got = cpu::pad_backward_in(&plan, &grad_out, &arena).unwrap();
        if i == 0 {
            assert_eq!(got.bytes().unwrap().as_ptr(), junk_at, "the given-back buffer was not reused");
        }
        assert_eq!(arena.held_bytes(), 0, "{mode}: the buffer is the gradient's now");
        assert_eq!(got, cpu::pad_backward(&plan, &grad_out).unwrap(), "{mode} on a reused buffer");
        arena.recycle(got);
    }
}
