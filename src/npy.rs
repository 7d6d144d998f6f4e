//! Reading and writing `.npy` files, including the descrs ml_dtypes uses for the types
//! numpy lacks (`<V2` bfloat16, `|V1` float8 and 4-bit, `<f1` float8e5m2) and `<U`n
//! strings. Hostile files are refused before any allocation sized by their header.

use crate::dtype::{DataType, ElementWidth};
use crate::error::{PadError, Result};
use crate::tensor::{element_count, pack_nibbles, unpack_nibbles, Tensor, TensorData};

const MAGIC: &[u8] = b"\x93NUMPY";
/// Headers past this length are refused (numpy's own limit is 10 000 bytes by default).
const MAX_HEADER: usize = 1 << 16;

fn err<T>(reason: impl Into<String>) -> Result<T> {
    Err(PadError::Npy { reason: reason.into() })
}

/// A `.npy` element descr such as `<f4`, `|V1` or `<U7`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Descr {
    /// `<`, `>`, `|` or `=`.
    pub order: char,
    /// numpy's kind letter: `b`, `i`, `u`, `f`, `c`, `U` or `V`.
    pub kind: char,
    /// Bytes per element as the descr says (for `U`, characters).
    pub size: usize,
}

impl Descr {
    /// Parses a descr string.
    pub fn parse(s: &str) -> Result<Descr> {
        let mut chars = s.chars();
        let (order, rest) = match s.chars().next() {
            Some(c @ ('<' | '>' | '|' | '=')) => {
                chars.next();
                (c, chars.as_str())
            }
            _ => ('|', s),
        };
        let mut it = rest.chars();
        let kind = it.next().unwrap_or(' ');
        let size: usize = match it.as_str().parse() {
            Ok(n) if n > 0 && n <= 1 << 20 => n,
            _ => return err(format!("unsupported descr {s:?}")),
        };
        if !matches!(kind, 'b' | 'i' | 'u' | 'f' | 'c' | 'U' | 'V') {
            return err(format!("unsupported descr {s:?}"));
        }
        Ok(Descr { order, kind, size })
    }

    /// Bytes per element in the file.
    pub fn item_bytes(&self) -> usize {
        if self.kind == 'U' {
            self.size * 4
        } else {
            self.size
        }
    }

    fn big_endian(&self) -> bool {
        self.order == '>' || (self.order == '=' && cfg!(target_endian = "big"))
    }

    /// The type numpy's descr implies, if it says one.
    pub fn default_type(&self) -> Option<DataType> {
        use DataType::*;
        Some(match (self.kind, self.size) {
            ('b', 1) => Bool,
            ('i', 1) => Int8,
            ('i', 2) => Int16,
            ('i', 4) => Int32,
            ('i', 8) => Int64,
            ('u', 1) => Uint8,
            ('u', 2) => Uint16,
            ('u', 4) => Uint32,
            ('u', 8) => Uint64,
            ('f', 1) => Float8e5m2,
            ('f', 2) => Float16,
            ('f', 4) => Float32,
            ('f', 8) => Float64,
            ('c', 8) => Complex64,
            ('c', 16) => Complex128,
            ('U', _) => String,
            _ => return None,
        })
    }
}

impl std::fmt::Display for Descr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}{}{}", self.order, self.kind, self.size)
    }
}

/// A parsed `.npy` file: descr, shape, and the data in C order and little-endian.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Npy {
    /// The descr as the file gives it.
    pub descr: Descr,
    /// The shape.
    pub shape: Vec<usize>,
    /// Element bytes, C order, little-endian (strings: UTF-32LE, `descr.size` characters each).
    pub data: Vec<u8>,
}

/// A tiny reader of the header's Python dict literal.
struct HeaderParser<'a> {
    s: &'a [u8],
    i: usize,
}

impl HeaderParser<'_> {
    fn skip_ws(&mut self) {
        while self.i < self.s.len() && self.s[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
    }
    fn eat(&mut self, c: u8) -> bool {
        self.skip_ws();
        if self.s.get(self.i) == Some(&c) {
            self.i += 1;
            true
        } else {
            false
        }
    }
    fn string(&mut self) -> Result<String> {
        self.skip_ws();
        let q = match self.s.get(self.i) {
            Some(&q @ (b'\'' | b'"')) => q,
            _ => return err("header: expected a quoted string"),
        };
        let start = self.i + 1;
        let end = self.s[start..].iter().position(|&c| c == q).map(|p| start + p);
        let Some(end) = end else {
            return err("header: unterminated string");
        };
        self.i = end + 1;
        Ok(String::from_utf8_lossy(&self.s[start..end]).into_owned())
    }
    fn word(&mut self) -> String {
        self.skip_ws();
        let start = self.i;
        while self.i < self.s.len() && (self.s[self.i].is_ascii_alphanumeric() || self.s[self.i] == b'_') {
            self.i += 1;
        }
        String::from_utf8_lossy(&self.s[start..self.i]).into_owned()
    }
    fn shape(&mut self) -> Result<Vec<usize>> {
        if !self.eat(b'(') {
            return err("header: shape is not a tuple");
        }
        let mut dims = Vec::new();
        loop {
            if self.eat(b')') {
                return Ok(dims);
            }
            let w = self.word();
            let dim: usize = match w.trim_end_matches('L').parse() {
                Ok(d) => d,
                Err(_) => return err(format!("header: bad dimension {w:?}")),
            };
            if dims.len() >= 64 {
                return err("header: more than 64 dimensions");
            }
            dims.push(dim);
            if !self.eat(b',') && !self.eat(b')') {
                return err("header: malformed shape tuple");
            } else if self.s.get(self.i - 1) == Some(&b')') {
                return Ok(dims);
            }
        }
    }
}

/// Parses a whole `.npy` file. Fortran-ordered and big-endian data are converted to C
/// order and little-endian.
pub fn parse(bytes: &[u8]) -> Result<Npy> {
    if bytes.len() < 10 || &bytes[..6] != MAGIC {
        return err("not a .npy file (bad magic or truncated)");
    }
    let (header_len, header_start) = match bytes[6] {
        1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10),
        2 | 3 if bytes.len() >= 12 => (u32::from_le_bytes(bytes[8..12].try_into().unwrap()) as usize, 12),
        v => return err(format!("unsupported .npy version {v}")),
    };
    if header_len > MAX_HEADER || header_start + header_len > bytes.len() {
        return err(format!("header of {header_len} bytes does not fit the file of {} bytes", bytes.len()));
    }
    let header = &bytes[header_start..header_start + header_len];
    let mut p = HeaderParser { s: header, i: 0 };
    let (mut descr, mut fortran, mut shape) = (None, None, None);
    if !p.eat(b'{') {
        return err("header: not a dict");
    }
    loop {
        if p.eat(b'}') {
            break;
        }
        let key = p.string()?;
        if !p.eat(b':') {
            return err("header: expected ':'");
        }
        match key.as_str() {
            "descr" => descr = Some(Descr::parse(&p.string()?)?),
            "fortran_order" => {
                fortran = Some(match p.word().as_str() {
                    "True" => true,
                    "False" => false,
                    w => return err(format!("header: fortran_order {w:?}")),
                })
            }
            "shape" => shape = Some(p.shape()?),
            k => return err(format!("header: unknown key {k:?}")),
        }
        if !p.eat(b',') {
            if p.eat(b'}') {
                break;
            }
            return err("header: expected ',' or '}'");
        }
    }
    let (Some(descr), Some(fortran), Some(shape)) = (descr, fortran, shape) else {
        return err("header: needs descr, fortran_order and shape");
    };
    let data = &bytes[header_start + header_len..];
    let item = descr.item_bytes();
    let expected = element_count(&shape).and_then(|n| n.checked_mul(item as u64));
    if expected != Some(data.len() as u64) {
        return err(format!(
            "shape {shape:?} of {descr} needs {} data bytes, the file has {}",
            expected.map_or("more than 2^64".into(), |e| e.to_string()),
            data.len()
        ));
    }
    let mut data = data.to_vec();
    if descr.big_endian() {
        swap_bytes(&mut data, &descr);
    }
    if fortran && shape.len() > 1 {
        data = fortran_to_c(&data, &shape, item);
    }
    Ok(Npy { descr, shape, data })
}

/// Reverses byte order per scalar (complex: per half; strings: per UTF-32 unit).
fn swap_bytes(data: &mut [u8], descr: &Descr) {
    let unit = match descr.kind {
        'c' => descr.size / 2,
        'U' => 4,
        'V' => 1,
        _ => descr.size,
    };
    if unit > 1 {
        data.chunks_exact_mut(unit).for_each(|c| c.reverse());
    }
}

fn fortran_to_c(data: &[u8], shape: &[usize], item: usize) -> Vec<u8> {
    let count = data.len() / item.max(1);
    let mut out = vec![0u8; data.len()];
    let mut coord = vec![0usize; shape.len()];
    for c_index in 0..count {
        // Column-major offset of this C-order coordinate.
        let (mut f, mut stride) = (0, 1);
        for (d, &n) in shape.iter().enumerate() {
            f += coord[d] * stride;
            stride *= n;
        }
        out[c_index * item..(c_index + 1) * item].copy_from_slice(&data[f * item..(f + 1) * item]);
        for d in (0..shape.len()).rev() {
            coord[d] += 1;
            if coord[d] < shape[d] {
                break;
            }
            coord[d] = 0;
        }
    }
    out
}

/// The tensor a `.npy` holds, as `dtype` (needed where the descr cannot say, `V` descrs;
/// it may also reinterpret an unsigned integer array of the same width). 4-bit types are
/// one element per byte in the file, in the low nibble.
pub fn to_tensor(npy: &Npy, dtype: Option<DataType>) -> Result<Tensor> {
    let d = &npy.descr;
    let dtype = match (dtype, d.default_type()) {
        (None, Some(t)) => t,
        (None, None) => return err(format!("descr {d} does not say the type; name it (--dtype)")),
        (Some(t), implied) => {
            let same_width = match t.width() {
                ElementWidth::Bits4 => d.size == 1,
                ElementWidth::String => d.kind == 'U',
                w => w.bytes() == Some(d.size),
            };
            let compatible = implied == Some(t) || (same_width && matches!(d.kind, 'V' | 'u'));
            if !compatible {
                return err(format!("descr {d} cannot hold {t}"));
            }
            t
        }
    };
    match dtype.width() {
        ElementWidth::String => {
            let chars = d.size;
            let strings = npy
                .data
                .chunks_exact(chars * 4)
                .enumerate()
                .map(|(i, e)| {
                    let s: Option<String> = e
                        .chunks_exact(4)
                        .map(|u| u32::from_le_bytes(u.try_into().unwrap()))
                        .take_while(|&u| u != 0)
                        .map(char::from_u32)
                        .collect();
                    s.ok_or_else(|| PadError::Npy { reason: format!("element {i} is not valid UTF-32") })
                })
                .collect::<Result<Vec<_>>>()?;
            Tensor::from_strings(npy.shape.clone(), strings)
        }
        ElementWidth::Bits4 => {
            if let Some(i) = npy.data.iter().position(|&b| b > 0x0f) {
                return err(format!("{dtype} element {i} is {:#04x}: the high nibble must be 0", npy.data[i]));
            }
            Tensor::from_bytes(dtype, npy.shape.clone(), pack_nibbles(&npy.data))
        }
        _ => Tensor::from_bytes(dtype, npy.shape.clone(), npy.data.clone()),
    }
}

/// Writes `tensor` as a `.npy` with descr `like` (an input's descr: the output keeps it;
/// a string descr widens if an element needs more characters).
pub fn to_bytes(tensor: &Tensor, like: &Descr) -> Result<Vec<u8>> {
    let mut descr = like.clone();
    let mut data = match tensor.data() {
        TensorData::Strings(strings) => {
            let width = strings.iter().map(|s| s.chars().count()).max().unwrap_or(0).max(like.size).max(1);
            descr.size = width;
            let mut out = Vec::with_capacity(strings.len() * width * 4);
            for s in strings {
                let n = s.chars().count();
                s.chars().for_each(|c| out.extend_from_slice(&(c as u32).to_le_bytes()));
                out.resize(out.len() + (width - n) * 4, 0);
            }
            out
        }
        TensorData::Bytes(b) if tensor.dtype().width() == ElementWidth::Bits4 => unpack_nibbles(b, tensor.len()),
        TensorData::Bytes(b) => b.clone(),
    };
    if descr.big_endian() {
        swap_bytes(&mut data, &descr);
    }
    let shape = match tensor.shape() {
        [d] => format!("({d},)"),
        s => format!("({})", s.iter().map(|d| d.to_string()).collect::<Vec<_>>().join(", ")),
    };
    let mut header = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}");
    // Pad so the data starts on a 64-byte boundary, newline-terminated, as numpy does.
    let total = 10 + header.len() + 1;
    header.push_str(&" ".repeat(total.next_multiple_of(64) - total));
    header.push('\n');
    let mut out = Vec::with_capacity(10 + header.len() + data.len());
    out.extend_from_slice(MAGIC);
    if header.len() <= u16::MAX as usize {
        out.extend_from_slice(&[1, 0]);
        out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    } else {
        return err("header too long");
    }
    out.extend_from_slice(header.as_bytes());
    out.append(&mut data);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(header: &str, data: &[u8]) -> Vec<u8> {
        let mut v = MAGIC.to_vec();
        v.extend_from_slice(&[1, 0]);
        v.extend_from_slice(&(header.len() as u16).to_le_bytes());
        v.extend_from_slice(header.as_bytes());
        v.extend_from_slice(data);
        v
    }

    #[test]
    fn round_trip_keeps_descr() {
        let t = Tensor::from_slice(DataType::Int16, vec![2, 1], &[1i16, -2]).unwrap();
        let d = Descr::parse("<i2").unwrap();
        let bytes = to_bytes(&t, &d).unwrap();
        let npy = parse(&bytes).unwrap();
        assert_eq!(npy.descr, d);
        assert_eq!(to_tensor(&npy, None).unwrap(), t);
        let s = Tensor::from_strings(vec![2], vec!["ab".into(), "é".into()]).unwrap();
        let npy = parse(&to_bytes(&s, &Descr::parse("<U1").unwrap()).unwrap()).unwrap();
        assert_eq!(npy.descr.to_string(), "<U2");
        assert_eq!(to_tensor(&npy, None).unwrap(), s);
    }

    #[test]
    fn big_endian_and_fortran_are_converted() {
        let f = file("{'descr': '>i2', 'fortran_order': True, 'shape': (2, 2), }", &[0, 1, 0, 2, 0, 3, 0, 4]);
        let t = to_tensor(&parse(&f).unwrap(), None).unwrap();
        assert_eq!(t.as_slice::<i16>().unwrap(), &[1, 3, 2, 4]);
    }

    #[test]
    fn hostile_headers_are_refused() {
        let huge = file("{'descr': '<f4', 'fortran_order': False, 'shape': (1000000000000000000,), }", &[0; 8]);
        assert!(parse(&huge).unwrap_err().to_string().contains("needs"));
        let over =
            file("{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296, 4294967296), }", &[]);
        assert!(parse(&over).is_err());
        assert!(parse(b"\x93NUMPY\x01\x00\xff\xff{").is_err());
        assert!(parse(&file("{'descr': '<S3', 'fortran_order': False, 'shape': (), }", &[0; 3])).is_err());
        assert!(parse(&file("{'descr': '<f4', 'shape': (), }", &[0; 4])).is_err());
        let nib = parse(&file("{'descr': '|V1', 'fortran_order': False, 'shape': (1,), }", &[0x10])).unwrap();
        assert!(to_tensor(&nib, Some(DataType::Int4)).unwrap_err().to_string().contains("high nibble"));
        assert!(to_tensor(&nib, None).is_err());
        assert!(to_tensor(&nib, Some(DataType::Float32)).is_err());
    }
}
