//! Host tensors: a shape, a data type and the data in ONNX's layout.

use crate::dtype::{DataType, ElementWidth};
use crate::error::{PadError, Result};
use crate::memory::{too_large, try_filled, try_zeroed_bytes};

/// The elements of a [`Tensor`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TensorData {
    /// Fixed-width types, little-endian; 4-bit types packed two per byte (element `2i` in the
    /// low nibble, `2i+1` in the high nibble, a last odd high nibble 0).
    Bytes(Vec<u8>),
    /// Strings, one per element.
    Strings(Vec<String>),
}

/// A host tensor. The constructors check that the data fits the shape and type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tensor {
    dtype: DataType,
    shape: Vec<usize>,
    data: TensorData,
}

/// Number of elements of a shape, or `None` if it overflows `u64`. A zero anywhere makes
/// it 0, however large the other dimensions.
pub(crate) fn element_count(shape: &[usize]) -> Option<u64> {
    if shape.contains(&0) {
        return Some(0);
    }
    shape.iter().try_fold(1u64, |acc, &d| acc.checked_mul(d as u64))
}

fn shape_u64(shape: &[usize]) -> Vec<u64> {
    shape.iter().map(|&d| d as u64).collect()
}

impl Tensor {
    /// A tensor of a fixed-width or 4-bit type from its bytes in ONNX layout.
    ///
    /// ```
    /// use wgpu_pad::{DataType, Tensor};
    /// let t = Tensor::from_bytes(DataType::Uint4, vec![3], vec![0x21, 0x03]).unwrap();
    /// assert_eq!(t.len(), 3);
    /// assert!(Tensor::from_bytes(DataType::Int16, vec![3], vec![0; 5]).is_err());
    /// ```
    pub fn from_bytes(dtype: DataType, shape: Vec<usize>, bytes: Vec<u8>) -> Result<Tensor> {
        let invalid =
            |reason: String| PadError::InvalidTensor { dtype: dtype.name(), shape: shape_u64(&shape), reason };
        if dtype.width() == ElementWidth::String {
            return Err(invalid("strings are built with Tensor::from_strings".into()));
        }
        let count = element_count(&shape).ok_or_else(|| invalid("element count overflows u64".into()))?;
        let expected = dtype.storage_bytes(count).ok_or_else(|| invalid("byte size overflows u64".into()))?;
        if bytes.len() as u64 != expected {
            return Err(invalid(format!("{} bytes given, {expected} expected for {count} elements", bytes.len())));
        }
        Ok(Tensor { dtype, shape, data: TensorData::Bytes(bytes) })
    }

    /// A string tensor.
    pub fn from_strings(shape: Vec<usize>, strings: Vec<String>) -> Result<Tensor> {
        let count = element_count(&shape);
        if count != Some(strings.len() as u64) {
            return Err(PadError::InvalidTensor {
                dtype: "string",
                shape: shape_u64(&shape),
                reason: format!("{} strings given, {count:?} expected", strings.len()),
            });
        }
        Ok(Tensor { dtype: DataType::String, shape, data: TensorData::Strings(strings) })
    }

    /// A string tensor from raw bytes per element, refusing any that is not UTF-8.
    pub fn from_utf8(shape: Vec<usize>, strings: Vec<Vec<u8>>) -> Result<Tensor> {
        let strings = strings
            .into_iter()
            .enumerate()
            .map(|(i, s)| {
                String::from_utf8(s).map_err(|e| PadError::InvalidTensor {
                    dtype: "string",
                    shape: shape_u64(&shape),
                    reason: format!("element {i} is not UTF-8: {e}"),
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Tensor::from_strings(shape, strings)
    }

    /// A tensor from a slice of plain values whose size matches the type's width
    /// (e.g. `f32` for float32, `u16` bits for bfloat16, `[f32; 2]` for complex64).
    ///
    /// ```
    /// use wgpu_pad::{DataType, Tensor};
    /// let t = Tensor::from_slice(DataType::Float32, vec![2, 2], &[1.0f32, 2.0, 3.0, 4.0]).unwrap();
    /// assert_eq!(t.as_slice::<f32>().unwrap(), &[1.0, 2.0, 3.0, 4.0]);
    /// ```
    pub fn from_slice<T: bytemuck::Pod>(dtype: DataType, shape: Vec<usize>, values: &[T]) -> Result<Tensor> {
        if dtype.width().bytes() != Some(std::mem::size_of::<T>()) {
            return Err(PadError::InvalidTensor {
                dtype: dtype.name(),
                shape: shape_u64(&shape),
                reason: format!(
                    "values of {} bytes given for a type of width {:?}",
                    std::mem::size_of::<T>(),
                    dtype.width()
                ),
            });
        }
        Tensor::from_bytes(dtype, shape, bytemuck::cast_slice(values).to_vec())
    }

    /// A zero-filled tensor (all-zero bits, `false`, or empty strings).
    pub fn zeros(dtype: DataType, shape: Vec<usize>) -> Result<Tensor> {
        let count = element_count(&shape)
            .ok_or_else(|| PadError::TooLarge { what: format!("shape {shape:?} overflows u64") })?;
        let data = match dtype.storage_bytes(count) {
            Some(b) => TensorData::Bytes(try_zeroed_bytes(usize::try_from(b).map_err(|_| too_large(b))?, "a tensor")?),
            None if dtype == DataType::String => {
                let count = usize::try_from(count).map_err(|_| too_large(count))?;
                TensorData::Strings(try_filled(count, String::new(), "a string tensor")?)
            }
            None => return Err(too_large(count)),
        };
        Ok(Tensor { dtype, shape, data })
    }

    /// The element type.
    pub fn dtype(&self) -> DataType {
        self.dtype
    }

    /// The shape.
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// The data.
    pub fn data(&self) -> &TensorData {
        &self.data
    }

    /// Takes the data out.
    pub fn into_data(self) -> TensorData {
        self.data
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        // The constructors checked that the data holds this many.
        element_count(&self.shape).unwrap_or(0) as usize
    }

    /// True if the tensor has no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The bytes of a fixed-width or 4-bit tensor; `None` for strings.
    pub fn bytes(&self) -> Option<&[u8]> {
        match &self.data {
            TensorData::Bytes(b) => Some(b),
            TensorData::Strings(_) => None,
        }
    }

    /// The strings of a string tensor.
    pub fn strings(&self) -> Option<&[String]> {
        match &self.data {
            TensorData::Strings(s) => Some(s),
            TensorData::Bytes(_) => None,
        }
    }

    /// The elements as a typed slice, if `T`'s size is the type's width and the bytes are
    /// aligned for `T`.
    pub fn as_slice<T: bytemuck::Pod>(&self) -> Option<&[T]> {
        if self.dtype.width().bytes() != Some(std::mem::size_of::<T>()) {
            return None;
        }
        match self.bytes()? {
            // An empty Vec's pointer is aligned only for bytes: no elements, an empty slice.
            [] => Some(&[]),
            bytes => bytemuck::try_cast_slice(bytes).ok(),
        }
    }
}

/// Splits 4-bit packed bytes into one element per byte (low nibble), `count` elements.
/// Public because 4-bit tensors hold their bytes packed, two elements a byte, low nibble
/// first (ONNX's layout, what [`Tensor::from_bytes`] takes and [`Tensor::bytes`] gives):
/// this and [`pack_nibbles`] are how a caller reads and builds them.
pub fn unpack_nibbles(packed: &[u8], count: usize) -> Vec<u8> {
    let mut out = vec![0; count];
    unpack_nibbles_into(packed, &mut out);
    out
}

/// Packs one element per byte (low nibble used) two per byte, ONNX layout.
pub fn pack_nibbles(elements: &[u8]) -> Vec<u8> {
    let mut out = vec![0; elements.len().div_ceil(2)];
    pack_nibbles_into(elements, &mut out);
    out
}

/// [`unpack_nibbles`] into a buffer of one byte per element (its length is the count).
pub(crate) fn unpack_nibbles_into(packed: &[u8], out: &mut [u8]) {
    for (i, e) in out.iter_mut().enumerate() {
        *e = (packed[i / 2] >> (4 * (i % 2))) & 0x0f;
    }
}

/// [`pack_nibbles`] into a buffer of `elements.len().div_ceil(2)` bytes.
pub(crate) fn pack_nibbles_into(elements: &[u8], out: &mut [u8]) {
    for (o, pair) in out.iter_mut().zip(elements.chunks(2)) {
        *o = (pair[0] & 0x0f) | (pair.get(1).copied().unwrap_or(0) << 4);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nibbles_round_trip() {
        let e = [1u8, 2, 3, 15, 0];
        let p = pack_nibbles(&e);
        assert_eq!(p, vec![0x21, 0xf3, 0x00]);
        assert_eq!(unpack_nibbles(&p, 5), e);
    }

    #[test]
    fn lengths_are_checked() {
        assert!(Tensor::from_bytes(DataType::Float32, vec![2], vec![0; 8]).is_ok());
        let e = Tensor::from_bytes(DataType::Float32, vec![2], vec![0; 7]).unwrap_err();
        assert!(e.to_string().contains("7 bytes given, 8 expected"), "{e}");
        assert!(Tensor::from_bytes(DataType::Int4, vec![3], vec![0; 1]).is_err());
        assert!(Tensor::from_strings(vec![2], vec!["a".into()]).is_err());
        let e = Tensor::from_utf8(vec![1], vec![vec![0xff]]).unwrap_err();
        assert!(e.to_string().contains("element 0 is not UTF-8"), "{e}");
        assert!(Tensor::from_bytes(DataType::Uint8, vec![usize::MAX, 2], vec![]).is_err());
        let empty = Tensor::from_bytes(DataType::Uint8, vec![1 << 40, 1 << 40, 0], vec![]).unwrap();
        assert_eq!(empty.len(), 0);
    }

    /// An empty tensor of any type is an empty slice of its element (an empty Vec's pointer is
    /// aligned for bytes only); a wrong element size is still `None`.
    #[test]
    fn empty_tensors_are_empty_slices() {
        let empty = Tensor::from_slice(DataType::Float32, vec![0], &[] as &[f32]).unwrap();
        assert_eq!(empty.as_slice::<f32>(), Some(&[][..]));
        assert_eq!(empty.as_slice::<f64>(), None);
        let wide = Tensor::from_bytes(DataType::Complex128, vec![3, 0], vec![]).unwrap();
        assert_eq!(wide.as_slice::<[f64; 2]>(), Some(&[][..]));
        let grad = crate::cpu::pad_backward(
            &crate::PadPlan::new(DataType::Float32, &[0, 3], &crate::PadRequest::new(vec![0, 1, 0, 1])).unwrap(),
            &Tensor::from_slice(DataType::Float32, vec![0, 5], &[] as &[f32]).unwrap(),
        )
        .unwrap();
        assert_eq!(grad.as_slice::<f32>(), Some(&[][..]));
    }
}
