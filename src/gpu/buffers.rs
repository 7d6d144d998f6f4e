//! Caller buffers as the kernel sees them ([`BufferRange`]), and small buffer helpers.

use crate::error::{PadError, Result};

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

    /// The rest of the buffer from byte `offset`, dense.
    pub fn at(buffer: &'a wgpu::Buffer, offset: u64) -> Self {
        BufferRange { buffer, offset, size: None, strides: None }
    }

    /// The same range read or written through per-axis element strides.
    pub fn with_strides(self, strides: &'a [u64]) -> Self {
        BufferRange { strides: Some(strides), ..self }
    }

    /// The byte just past what this range may touch, checked against the buffer.
    pub(crate) fn end(&self, which: &'static str) -> Result<u64> {
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
        view.slice(..n).copy_from_slice(bytes);
        view.slice(n..).copy_from_slice(&[0u8; 4][..size as usize - n]);
    }
    buffer.unmap();
    Ok(buffer)
}
