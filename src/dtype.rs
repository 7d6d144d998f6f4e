//! The 24 element types of ONNX Pad-24, with their names and widths.

use std::fmt;

/// How many bits one element occupies, which is all that Pad needs to know: it moves
/// elements, it never computes on them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ElementWidth {
    /// Two elements per byte (int4, uint4, float4e2m1), ONNX's packed layout.
    Bits4,
    /// One byte per element.
    Bits8,
    /// Two bytes per element.
    Bits16,
    /// Four bytes per element.
    Bits32,
    /// Eight bytes per element.
    Bits64,
    /// Sixteen bytes per element (complex128).
    Bits128,
    /// Variable-length UTF-8 strings.
    String,
}

impl ElementWidth {
    /// Bytes per element for the fixed widths of 8 bits or more; `None` for 4-bit and strings.
    pub fn bytes(self) -> Option<usize> {
        match self {
            ElementWidth::Bits8 => Some(1),
            ElementWidth::Bits16 => Some(2),
            ElementWidth::Bits32 => Some(4),
            ElementWidth::Bits64 => Some(8),
            ElementWidth::Bits128 => Some(16),
            ElementWidth::Bits4 | ElementWidth::String => None,
        }
    }

    /// Bits per element; `None` for strings.
    pub fn bits(self) -> Option<u32> {
        match self {
            ElementWidth::Bits4 => Some(4),
            ElementWidth::String => None,
            w => w.bytes().map(|b| b as u32 * 8),
        }
    }
}

macro_rules! data_types {
    ($( $variant:ident => $name:literal, $width:ident, Pad-$since:literal, $doc:literal; )*) => {
        /// An ONNX tensor element type: the 24 types that Pad-24 accepts.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum DataType {
            $( #[doc = $doc] $variant, )*
        }

        impl DataType {
            /// Every type, in ONNX's order of appearance in Pad-24's type list.
            pub const ALL: [DataType; [$( stringify!($variant), )*].len()] = [$( DataType::$variant, )*];

            /// The name used in this crate, the conformance corpus and on the command line
            /// (ONNX's names, with `float32` and `float64` for `float` and `double`).
            pub fn name(self) -> &'static str {
                match self { $( DataType::$variant => $name, )* }
            }

            /// How wide one element is.
            pub fn width(self) -> ElementWidth {
                match self { $( DataType::$variant => ElementWidth::$width, )* }
            }

            /// The ONNX Pad version that added the type (`forms` refuses it in earlier ones).
            pub(crate) fn onnx_pad_since(self) -> u32 {
                match self { $( DataType::$variant => $since, )* }
            }
        }
    };
}

data_types! {
    Bool => "bool", Bits8, Pad-13, "Boolean, one byte (0 or 1).";
    Int8 => "int8", Bits8, Pad-11, "Signed 8-bit integer.";
    Int16 => "int16", Bits16, Pad-11, "Signed 16-bit integer.";
    Int32 => "int32", Bits32, Pad-11, "Signed 32-bit integer.";
    Int64 => "int64", Bits64, Pad-11, "Signed 64-bit integer.";
    Uint8 => "uint8", Bits8, Pad-11, "Unsigned 8-bit integer.";
    Uint16 => "uint16", Bits16, Pad-11, "Unsigned 16-bit integer.";
    Uint32 => "uint32", Bits32, Pad-11, "Unsigned 32-bit integer.";
    Uint64 => "uint64", Bits64, Pad-11, "Unsigned 64-bit integer.";
    Float16 => "float16", Bits16, Pad-1, "IEEE half precision.";
    Bfloat16 => "bfloat16", Bits16, Pad-13, "Brain floating point, 16 bits.";
    Float32 => "float32", Bits32, Pad-1, "IEEE single precision (ONNX `float`).";
    Float64 => "float64", Bits64, Pad-1, "IEEE double precision (ONNX `double`).";
    Complex64 => "complex64", Bits64, Pad-13, "Two f32: real, imaginary.";
    Complex128 => "complex128", Bits128, Pad-13, "Two f64: real, imaginary.";
    String => "string", String, Pad-13, "UTF-8 string.";
    Float8e4m3fn => "float8e4m3fn", Bits8, Pad-21, "8-bit float, 4 exponent bits, finite only.";
    Float8e4m3fnuz => "float8e4m3fnuz", Bits8, Pad-21, "8-bit float, 4 exponent bits, finite, unsigned zero.";
    Float8e5m2 => "float8e5m2", Bits8, Pad-21, "8-bit float, 5 exponent bits.";
    Float8e5m2fnuz => "float8e5m2fnuz", Bits8, Pad-21, "8-bit float, 5 exponent bits, finite, unsigned zero.";
    Float8e8m0 => "float8e8m0", Bits8, Pad-24, "8-bit exponent-only float (scales).";
    Int4 => "int4", Bits4, Pad-21, "Signed 4-bit integer, packed two per byte.";
    Uint4 => "uint4", Bits4, Pad-21, "Unsigned 4-bit integer, packed two per byte.";
    Float4e2m1 => "float4e2m1", Bits4, Pad-23, "4-bit float, packed two per byte.";
}

impl DataType {
    /// Looks a type up by name: this crate's names (`float8e4m3fn`), ONNX's own spellings
    /// (`FLOAT16`, `BFLOAT16`, `FLOAT8E4M3FN`, `float`, `double`) and ml_dtypes' and numpy's
    /// (`float8_e4m3fn`, `float8_e8m0fnu`, `float4_e2m1fn`, `float16`): case and underscores
    /// do not matter.
    ///
    /// ```
    /// use wgpu_pad::DataType;
    /// assert_eq!(DataType::from_name("BFLOAT16"), Some(DataType::Bfloat16));
    /// assert_eq!(DataType::from_name("float8_e4m3fn"), Some(DataType::Float8e4m3fn));
    /// assert_eq!(DataType::from_name("float4_e2m1fn"), Some(DataType::Float4e2m1));
    /// ```
    pub fn from_name(name: &str) -> Option<DataType> {
        let key: std::string::String = name.chars().filter(|&c| c != '_').flat_map(char::to_lowercase).collect();
        match key.as_str() {
            "float" => Some(DataType::Float32),
            "double" => Some(DataType::Float64),
            // ml_dtypes' names where ONNX's differ by more than an underscore.
            "float8e8m0fnu" => Some(DataType::Float8e8m0),
            "float4e2m1fn" => Some(DataType::Float4e2m1),
            key => DataType::ALL.into_iter().find(|t| t.name() == key),
        }
    }

    /// Every name [`from_name`](Self::from_name) accepts besides the types' own, for messages.
    pub const ALIASES: &'static str =
        "ONNX's upper-case names (FLOAT16, BFLOAT16, FLOAT8E4M3FN, ...), float and double, and ml_dtypes' (float8_e4m3fn, float8_e8m0fnu, float4_e2m1fn, ...)";

    /// The types' names, comma-separated, for messages and help.
    pub fn names() -> std::string::String {
        DataType::ALL.iter().map(|t| t.name()).collect::<Vec<_>>().join(", ")
    }

    /// True for the types the GPU path runs (every fixed width of 8 bits or more); strings
    /// and 4-bit types run on the CPU path.
    pub fn gpu_capable(self) -> bool {
        self.width().bytes().is_some()
    }

    /// Bytes that `count` elements take in this crate's layout (4-bit types packed two per
    /// byte); `None` for strings or on overflow.
    pub fn storage_bytes(self, count: u64) -> Option<u64> {
        match self.width() {
            ElementWidth::Bits4 => Some(count.div_ceil(2)),
            ElementWidth::String => None,
            w => count.checked_mul(w.bytes()? as u64),
        }
    }
}

impl fmt::Display for DataType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_are_unique() {
        for t in DataType::ALL {
            assert_eq!(DataType::from_name(t.name()), Some(t));
        }
        let mut names: Vec<_> = DataType::ALL.iter().map(|t| t.name()).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), DataType::ALL.len());
        assert_eq!("float".parse::<DataType>().unwrap(), DataType::Float32);
        assert!("float33".parse::<DataType>().is_err());
        // ONNX's and ml_dtypes' spellings.
        for (name, t) in [
            ("FLOAT", DataType::Float32),
            ("FLOAT16", DataType::Float16),
            ("BFLOAT16", DataType::Bfloat16),
            ("FLOAT8E4M3FN", DataType::Float8e4m3fn),
            ("FLOAT8E5M2FNUZ", DataType::Float8e5m2fnuz),
            ("FLOAT4E2M1", DataType::Float4e2m1),
            ("UINT4", DataType::Uint4),
            ("float8_e4m3fn", DataType::Float8e4m3fn),
            ("float8_e5m2", DataType::Float8e5m2),
            ("float8_e8m0fnu", DataType::Float8e8m0),
            ("float4_e2m1fn", DataType::Float4e2m1),
            ("complex128", DataType::Complex128),
        ] {
            assert_eq!(DataType::from_name(name), Some(t), "{name}");
        }
    }

    #[test]
    fn widths() {
        assert_eq!(DataType::Complex128.width().bytes(), Some(16));
        assert_eq!(DataType::Bfloat16.width().bits(), Some(16));
        assert_eq!(DataType::Uint4.storage_bytes(3), Some(2));
        assert!(!DataType::String.gpu_capable());
        assert!(DataType::Float8e8m0.gpu_capable());
    }
}
