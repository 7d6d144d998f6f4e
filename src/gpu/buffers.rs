//! Caller buffers as the kernel sees them ([`BufferRange`]), and small buffer helpers.

use std::sync::Mutex;

use crate::error::{PadError, Result, Side};
use crate::memory::pool::{Bytes, Kept};

/// Where a pad reads its input or writes its output in a caller's buffer: element 0 at
/// byte `offset`, optionally with per-axis element strides (a view).
///
/// The offset needs only to be a multiple of the element's size: bindings are aligned
/// down to the device's `min_storage_buffer_offset_alignment` and the remainder is
/// added in the shader. Without strides the tensor is dense (row-major). With strides:
///
/// - an output view may be any strides that give each element its own place (one slice
///   of a concat on an inner axis, say); 8- and 16-bit outputs must be dense unless the
///   innermost run is unpadded, contiguous and moves in whole 4-byte words, since the GPU
///   writes them in 32-bit words;
/// - an input view may be any strides, 0 included (a broadcast axis), or a transpose.
///
/// Bytes of the buffer outside the output's elements are never changed.
#[derive(Debug, Clone, Copy)]
pub struct BufferRange<'a> {
    /// The buffer; it needs `STORAGE` usage.
    pub buffer: &'a wgpu::Buffer,
    /// Byte offset of element 0.
    pub offset: u64,
    /// Bytes from `offset` the pad may touch, if the caller bounds it; `None` for the rest
    /// of the buffer.
    pub size: Option<u64>,
    /// Element strides per axis of the tensor's shape; `None` for dense.
    pub strides: Option<&'a [u64]>,
}

impl<'a> BufferRange<'a> {
    /// The whole buffer, from offset 0, dense.
    pub fn whole(buffer: &'a wgpu::Buffer) -> Self {
        BufferRange { buffer, offset: 0, size: None, strides: None }
    }

    /// The `size` bytes from byte `offset`, dense: a tensor's place in a pooled allocation.
    /// The pad never touches a byte outside them; a range too small for the tensor, or
    /// past the buffer's end, is an error when the pad is prepared.
    pub fn new(buffer: &'a wgpu::Buffer, offset: u64, size: u64) -> Self {
        BufferRange { buffer, offset, size: Some(size), strides: None }
    }

    /// The rest of the buffer from byte `offset`, dense.
    pub fn at(buffer: &'a wgpu::Buffer, offset: u64) -> Self {
        BufferRange { buffer, offset, size: None, strides: None }
    }

    /// The same range read or written through per-axis element strides.
    pub fn with_strides(self, strides: &'a [u64]) -> Self {
        BufferRange { strides: Some(strides), ..self }
    }

    /// The byte just past what this range may touch, checked against the buffer.
    pub(crate) fn end(&self, which: Side) -> Result<u64> {
        let size = self.buffer.size();
        match self.size {
            Some(s) if self.offset.checked_add(s).is_some_and(|end| end <= size) => Ok(self.offset + s),
            Some(s) => Err(PadError::BufferTooSmall { which, needed: s, offset: self.offset, size }),
            None => Ok(size),
        }
    }
}

/// A wgpu error on one line: its description (several lines, with the causes) joined.
pub(crate) fn describe(e: &impl std::fmt::Display) -> String {
    e.to_string().split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A buffer holding `bytes` (rounded up to 4 with zeros). Unlike wgpu's `create_buffer_init`,
/// which panics when the device is lost, a failure here is an error.
pub(crate) fn buffer_with(
    device: &wgpu::Device,
    label: &str,
    usage: wgpu::BufferUsages,
    bytes: &[u8],
) -> Result<wgpu::Buffer> {
    let size = (bytes.len() as u64).next_multiple_of(4).max(4);
    let buffer =
        device.create_buffer(&wgpu::BufferDescriptor { label: Some(label), size, usage, mapped_at_creation: true });
    {
        let mut view = buffer.slice(..).get_mapped_range_mut().map_err(|e| PadError::DeviceLost {
            reason: format!("cannot fill the {label} buffer: {}", describe(&e)),
        })?;
        let n = bytes.len();
        write_mapped(view.slice(..n), bytes);
        view.slice(n..).copy_from_slice(&[0u8; 4][..size as usize - n]);
    }
    buffer.unmap();
    Ok(buffer)
}

/// `to = from` through a mapping, by the crate's copy ([`crate::copy::copy_raw`]): glibc's
/// memcpy is 10 times slower at some distances between the two on some x86 CPUs.
fn write_mapped(mut to: wgpu::WriteOnly<'_, [u8]>, from: &[u8]) {
    assert_eq!(to.len(), from.len());
    // SAFETY: `to` is `from.len()` writable bytes (WriteOnly's invariant, lengths checked),
    // written and never read; `from` is initialised and cannot overlap it (`to` is exclusive).
    unsafe { crate::copy::copy_raw(to.as_raw_element_ptr().as_ptr(), from.as_ptr(), from.len()) }
}

/// What a pooled buffer is for (its usages).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    /// An uploaded input: `STORAGE | COPY_DST`.
    Input,
    /// A pad's output: `STORAGE | COPY_SRC`.
    Output,
    /// Where the output is read back: `MAP_READ | COPY_DST`.
    Readback,
    /// An input written through a mapping, where CPU and GPU share memory:
    /// `STORAGE | MAP_WRITE | COPY_DST` (needs `MAPPABLE_PRIMARY_BUFFERS`).
    MappedInput,
    /// An output read through a mapping, where CPU and GPU share memory:
    /// `STORAGE | MAP_READ` (needs `MAPPABLE_PRIMARY_BUFFERS`).
    MappedOutput,
}

impl Role {
    fn usage(self) -> wgpu::BufferUsages {
        use wgpu::BufferUsages as U;
        match self {
            Role::Input => U::STORAGE | U::COPY_DST,
            Role::Output => U::STORAGE | U::COPY_SRC,
            Role::Readback => U::MAP_READ | U::COPY_DST,
            Role::MappedInput => U::STORAGE | U::MAP_WRITE | U::COPY_DST,
            Role::MappedOutput => U::STORAGE | U::MAP_READ,
        }
    }

    fn label(self) -> &'static str {
        match self {
            Role::Input => "wgpu-pad input",
            Role::Output => "wgpu-pad output",
            Role::Readback => "wgpu-pad readback",
            Role::MappedInput => "wgpu-pad mapped input",
            Role::MappedOutput => "wgpu-pad mapped output",
        }
    }
}

/// The size a pooled buffer of at least `bytes` gets on a device whose buffers hold at most
/// `max_buffer` bytes: 2^k, 1.25, 1.5 or 1.75 x 2^k (at most a quarter wasted), so buffers
/// of nearby sizes serve each other; where that class is past the device's limit (a 1.8 GiB
/// output rounds to 2 GiB, past lavapipe's 2^31 - 1), the size itself, in whole words.
pub(crate) fn size_class(bytes: u64, max_buffer: u64) -> u64 {
    let floor = bytes.max(256);
    let top = 1u64 << (63 - floor.leading_zeros()); // the highest power of two <= floor
    let quarter = (top / 4).max(1);
    let class = floor.div_ceil(quarter).saturating_mul(quarter);
    if class <= max_buffer {
        class
    } else {
        bytes.next_multiple_of(4).max(4)
    }
}

/// Device buffers kept between [`GpuContext::pad`](super::GpuContext::pad) calls, by role,
/// so a warm call creates none: each call takes what it needs and gives it back when done.
pub(crate) type BufferPool = Kept<(Role, wgpu::Buffer)>;

impl Bytes for (Role, wgpu::Buffer) {
    fn bytes(&self) -> u64 {
        self.1.size()
    }
}

/// A buffer for `role` of `bytes`' size class: from the pool, else new. A new
/// [`Role::MappedInput`] buffer comes mapped (the `bool`), ready for [`upload`].
pub(crate) fn pooled_buffer(
    device: &wgpu::Device,
    pool: &Mutex<BufferPool>,
    role: Role,
    bytes: u64,
) -> (wgpu::Buffer, bool) {
    let class = size_class(bytes, device.limits().max_buffer_size);
    let taken = pool.lock().unwrap_or_else(|e| e.into_inner()).take(|(r, b)| *r == role && b.size() == class);
    if let Some((_, buffer)) = taken {
        return (buffer, false);
    }
    let mapped = role == Role::MappedInput;
    let buffer = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some(role.label()),
        size: class,
        usage: role.usage(),
        mapped_at_creation: mapped,
    });
    (buffer, mapped)
}

/// Writes `bytes` at the start of `buffer`, the last partial word padded with zeros. A
/// `MAP_WRITE` buffer is written through its mapping (`mapped`: it is mapped already),
/// with no staging copy; others, and one that does not map at once, with
/// `queue.write_buffer`.
pub(crate) fn upload(device: &wgpu::Device, queue: &wgpu::Queue, buffer: &wgpu::Buffer, bytes: &[u8], mapped: bool) {
    let size = (bytes.len() as u64).next_multiple_of(4);
    if buffer.usage().contains(wgpu::BufferUsages::MAP_WRITE) {
        if mapped || map_for_writing_now(device, buffer) {
            if size > 0 {
                // Fails only for a buffer that could not be made (out of memory), which
                // the caller's error scope reports.
                if let Ok(mut view) = buffer.slice(..size).get_mapped_range_mut() {
                    write_mapped(view.slice(..bytes.len()), bytes);
                    view.slice(bytes.len()..).fill(0);
                }
            }
            buffer.unmap();
            return;
        }
        // Cancels the pending map, so that the queue may write the buffer.
        buffer.unmap();
    }
    let whole = bytes.len() / 4 * 4;
    if whole > 0 {
        queue.write_buffer(buffer, 0, &bytes[..whole]);
    }
    if whole < bytes.len() {
        let mut tail = [0u8; 4];
        tail[..bytes.len() - whole].copy_from_slice(&bytes[whole..]);
        queue.write_buffer(buffer, whole as u64, &tail);
    }
}

/// Maps a kept buffer for writing if that can happen without waiting: the pool gets a
/// buffer back only once its submission is done, so one non-blocking poll maps it on
/// native targets. (In the browser mapping waits for the event loop: never at once.)
fn map_for_writing_now(device: &wgpu::Device, buffer: &wgpu::Buffer) -> bool {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    let mapped = Arc::new(AtomicBool::new(false));
    let flag = mapped.clone();
    buffer.slice(..).map_async(wgpu::MapMode::Write, move |r| flag.store(r.is_ok(), Ordering::Release));
    let _ = device.poll(wgpu::PollType::Poll);
    let now = mapped.load(Ordering::Acquire);
    if !now {
        log::debug!("wgpu-pad: a kept input buffer did not map at once; using queue.write_buffer");
    }
    now
}

#[cfg(test)]
mod tests {
    use super::{size_class, write_mapped};

    /// Writes through a mapping arrive whole, in pieces or not: lengths around the piece,
    /// at distances `rep movsb` is slow at and not.
    #[test]
    fn mapped_writes_arrive_whole() {
        let src: Vec<u8> = (0..300_000u32).map(|i| (i % 251) as u8).collect();
        let mut dst = vec![0u8; src.len() + 8192];
        for len in [0, 1, 2048, 2049, 5000, 300_000] {
            for distance in [0, 8, 64] {
                let at = (src.as_ptr() as usize + distance).wrapping_sub(dst.as_ptr() as usize) % 4096;
                dst.fill(0);
                write_mapped(wgpu::WriteOnly::from_mut(&mut dst[at..at + len]), &src[..len]);
                assert!(dst[at..at + len] == src[..len], "{len} bytes at distance {distance}");
            }
        }
    }

    #[test]
    fn size_classes_waste_at_most_a_quarter() {
        for bytes in [1u64, 255, 256, 257, 1000, 4096, 5000, 1 << 20, (1 << 20) + 1, 67_634_176, (1 << 40) + 3] {
            let c = size_class(bytes, u64::MAX);
            assert!(c >= bytes && c >= 256, "{bytes} -> {c}");
            assert!(c <= (bytes.max(256) * 5).div_ceil(4) + 4, "{bytes} -> {c}: more than a quarter wasted");
            assert_eq!(c % 4, 0, "{bytes} -> {c}: not whole words");
            assert_eq!(size_class(c, u64::MAX), c, "{bytes} -> {c}: classes are fixed points");
        }
        assert_eq!(size_class(64 << 20, u64::MAX), 64 << 20);
        assert_eq!(size_class((64 << 20) + 1, u64::MAX), 80 << 20);
    }

    /// Round four: a size whose class is past the device's buffer limit gets the size
    /// itself (1.8 GiB on lavapipe's 2^31 - 1 rounded to 2 GiB and failed).
    #[test]
    fn size_classes_stay_within_the_device_limit() {
        let lavapipe = (1u64 << 31) - 1;
        for bytes in [1_887_436_804u64, (1 << 31) - 4, (7 << 28) + 4] {
            let c = size_class(bytes, lavapipe);
            assert!(c >= bytes && c <= lavapipe && c.is_multiple_of(4), "{bytes} -> {c}");
        }
        assert_eq!(size_class(1 << 20, lavapipe), 1 << 20, "classes under the limit unchanged");
    }
}
