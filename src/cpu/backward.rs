//! The pad's gradient on the CPU: [`pad_backward`], axis by axis in the order
//! [`crate::adjoint`] documents (the last axis first, each input index's images summed by
//! [`ordered_sum`](crate::adjoint::ordered_sum)), a gather: each input element's sums are its
//! own, with no scatter.

use half::{bf16, f16};

use half::slice::HalfFloatSliceExt;
use std::mem::MaybeUninit;

#[cfg(all(target_arch = "x86_64", not(miri)))]
mod chains;
#[cfg(all(target_arch = "x86_64", not(miri)))]
mod eights;
mod sixteen;

use super::float8::Float8;
use crate::adjoint::{block_len, one_image_run, pad_runs, Run, BLOCK};
use crate::dtype::DataType;
use crate::error::{PadError, Result};
use crate::memory::{output_bytes, OutputArena};
use crate::mode::Mode;
use crate::plan::{AxisMap, PadPlan};
use crate::tensor::Tensor;
use crate::threads::{share_out, threads, PARALLEL_MIN_BYTES};
#[cfg(all(target_arch = "x86_64", not(miri)))]
use eights::f32_sums_sse2;
use sixteen::{bf16_rows, f16_rows};

/// The gradient of a pad's input from the gradient of its output, `grad_out` (of the plan's
/// type and output shape): each input element's is the sum of `grad_out` over the output
/// positions that read it (none where it was cropped away, so zero), summed in the fixed
/// order [`crate::adjoint`] documents, so that every run and every path gives the same bits.
/// The GPU's `PadKernel::pad_backward` gives these bits too.
///
/// Types: the floats (`float16`, `bfloat16`, `float32`, `float64` and the float8s but
/// `float8e8m0`, each addition rounded in the type as numpy and ml_dtypes round it: a float8
/// sum is taken in f32 and rounded to nearest-even, past the type's range to its infinity
/// where it has one, else to its NaN) and the complex types (each part summed alone).
/// Integer, bool, string and 4-bit tensors, and `float8e8m0` (a scale type with no zero to
/// start a sum from), are a [`PadError::Unsupported`] (integers and bools have no gradient).
///
/// ```
/// use wgpu_pad::{cpu, DataType, Mode, PadPlan, PadRequest, Tensor};
/// // [1, 2, 3] wrapped by 2 a side reads 2 3 | 1 2 3 | 1 2: elements 0 and 2 twice, 1 three times.
/// let plan = PadPlan::new(DataType::Float32, &[3], &PadRequest::new(vec![2, 2]).mode(Mode::Wrap))?;
/// let grad_out = Tensor::from_slice(DataType::Float32, vec![7], &[1f32, 10., 100., 1000., 10000., 1e5, 1e6])?;
/// let grad_in = cpu::pad_backward(&plan, &grad_out)?;
/// assert_eq!(grad_in.as_slice::<f32>().unwrap(), &[100. + 1e5, 1. + 1000. + 1e6, 10. + 10000.]);
/// # Ok::<(), wgpu_pad::PadError>(())
/// ```
pub fn pad_backward(plan: &PadPlan, grad_out: &Tensor) -> Result<Tensor> {
    backward_with(plan, grad_out, None)
}

/// [`pad_backward`], writing a large gradient into memory kept by `arena` where a buffer
/// there fits (given back with [`OutputArena::recycle`]): a training step repeated on the
/// same shapes then takes no fresh memory for it (its pages faulted in once, not every step).
///
/// ```
/// use wgpu_pad::{cpu, DataType, Mode, OutputArena, PadPlan, PadRequest, Tensor};
/// let plan = PadPlan::new(DataType::Float32, &[512, 512], &PadRequest::new(vec![2, 2, 2, 2]).mode(Mode::Reflect))?;
/// let grad_out = Tensor::from_slice(DataType::Float32, plan.out_shape().to_vec(), &vec![1f32; plan.out_len()])?;
/// let arena = OutputArena::new(64 << 20);
/// for _ in 0..3 {
///     let grad_in = cpu::pad_backward_in(&plan, &grad_out, &arena)?;
///     assert_eq!(grad_in, cpu::pad_backward(&plan, &grad_out)?);
///     arena.recycle(grad_in); // kept where large (16 MiB and more) for the next step's
/// }
/// # Ok::<(), wgpu_pad::PadError>(())
/// ```
pub fn pad_backward_in(plan: &PadPlan, grad_out: &Tensor, arena: &OutputArena) -> Result<Tensor> {
    backward_with(plan, grad_out, Some(arena))
}

fn backward_with(plan: &PadPlan, grad_out: &Tensor, arena: Option<&OutputArena>) -> Result<Tensor> {
    let dtype = plan.dtype();
    if grad_out.dtype() != dtype || grad_out.shape() != plan.out_shape() {
        return Err(PadError::InvalidTensor {
            dtype: grad_out.dtype().name(),
            shape: grad_out.shape().iter().map(|&d| d as u64).collect(),
            reason: format!("the gradient of the plan's output is {} of shape {:?}", dtype, plan.out_shape()),
        });
    }
    let bytes = grad_out.bytes().ok_or_else(|| unsupported(dtype))?;
    if plan.has_interior() && has_gradient(dtype) {
        // Each input element has one image at most: no sums, the bits moved as they are.
        let width = dtype.width().bytes().expect("a float or complex type has a width");
        return Tensor::from_bytes(dtype, plan.in_shape().to_vec(), super::interior::backward(plan, width, bytes));
    }
    if let Some(crop) = crop_of(plan).filter(|_| has_gradient(dtype)) {
        return super::pad_with(&crop, grad_out, arena);
    }
    let out = match dtype {
        DataType::Float32 => run::<f32>(plan, bytes, arena, 1, 0.0, f32_rows(), &f32_gathered),
        DataType::Float64 => run::<f64>(plan, bytes, arena, 1, 0.0, Rows::adding(&add_rows_f64), &|s, i, o| {
            gathered_ieee(s, i, o, 0.0, add_f64)
        }),
        DataType::Float16 => {
            let rows = f16_rows();
            run::<f16>(plan, bytes, arena, 1, f16::ZERO, rows, &|s, i, o| gathered(s, i, o, f16::ZERO, add_f16))
        }
        DataType::Bfloat16 => {
            let rows = bf16_rows();
            run::<bf16>(plan, bytes, arena, 1, bf16::ZERO, rows, &|s, i, o| gathered(s, i, o, bf16::ZERO, add_bf16))
        }
        // Each part alone: real, imaginary, real, … is a float array of twice the elements.
        DataType::Complex64 => run::<f32>(plan, bytes, arena, 2, 0.0, Rows::adding(&add_rows_f32), &|s, i, o| {
            gathered_ieee(s, i, o, 0.0, add_f32)
        }),
        DataType::Complex128 => run::<f64>(plan, bytes, arena, 2, 0.0, Rows::adding(&add_rows_f64), &|s, i, o| {
            gathered_ieee(s, i, o, 0.0, add_f64)
        }),
        _ => match Float8::new(dtype) {
            // +0 is 0x00 in every float8 type.
            Some(f8) => {
                let add = |a: u8, b: u8| f8.add(a, b);
                let add_rows =
                    |acc: &mut [u8], terms: &[u8]| acc.iter_mut().zip(terms).for_each(|(a, &t)| *a = add(*a, t));
                run::<u8>(plan, bytes, arena, 1, 0, Rows::adding(&add_rows), &|s, i, o| gathered(s, i, o, 0, add))
            }
            None => return Err(unsupported(dtype)),
        },
    }?;
    Tensor::from_bytes(dtype, plan.in_shape().to_vec(), out)
}

/// Where every kept index has one image (a constant pad, or a plan that only crops), the
/// gradient is grad_out cropped to the kept elements, zeros where the input was cropped
/// away: the forward pad of grad_out by that plan (its row copies and threads), the bits
/// the sums of one term keep. `None` elsewhere.
fn crop_of(plan: &PadPlan) -> Option<PadPlan> {
    let mode = plan.mode();
    let one_image = |a: &crate::plan::AxisMap| mode == crate::Mode::Constant || a.pad_before + a.pad_after == 0;
    if !plan.axes().iter().all(one_image) {
        return None;
    }
    // Input index k is output position k - crop_start + pad_before; an axis that keeps
    // nothing, all cropped away (grad_out wholly, the input's length padded).
    let shift = |a: &crate::plan::AxisMap| match a.kept {
        0 => (a.in_len as i64, -(a.out_len as i64)),
        _ => {
            (a.crop_start as i64 - a.pad_before as i64, (a.in_len - a.crop_start - a.kept) as i64 - a.pad_after as i64)
        }
    };
    let (begins, ends): (Vec<i64>, Vec<i64>) = plan.axes().iter().map(shift).unzip();
    // The gradient is the input's size, which the forward's cap never bounded.
    let request = crate::PadRequest::new([begins, ends].concat()).max_output_bytes(u64::MAX);
    PadPlan::new(plan.dtype(), plan.out_shape(), &request).ok()
}

/// One addition of a gradient's sum, under the one NaN rule the GPU's shaders keep too (so
/// that the paths agree bit for bit): a NaN operand is kept, the sum so far before the term,
/// with its quiet bit set (sign and payload as they were); a NaN the addition makes
/// (infinities of both signs) is the positive quiet NaN, whatever the machine's own default
/// NaN; anything else is IEEE's `a + b`. (Which NaN `a + b` keeps is the hardware's and the
/// compiler's choice, so it is decided here.)
pub(crate) fn add_f32(a: f32, b: f32) -> f32 {
    // The NaN rule off the sum's path: `a + b` is NaN exactly where an operand is or the
    // addition makes one, so a chain of additions waits on `addss` alone.
    let sum = a + b;
    match sum.is_nan() {
        true => nan_sum_f32(a, b),
        false => sum,
    }
}

/// [`add_f32`] where the sum is NaN.
#[cold]
#[inline(never)]
fn nan_sum_f32(a: f32, b: f32) -> f32 {
    const QUIET: u32 = 0x0040_0000;
    match (a.is_nan(), b.is_nan()) {
        (true, _) => f32::from_bits(a.to_bits() | QUIET),
        (false, true) => f32::from_bits(b.to_bits() | QUIET),
        (false, false) => f32::from_bits(0x7fc0_0000),
    }
}

/// [`add_f32`]'s rule in float16: the sum taken in f32 (exact for two float16s but where it
/// rounds once), rounded to nearest even.
fn add_f16(a: f16, b: f16) -> f16 {
    f16::from_f32(add_f32(a.to_f32(), b.to_f32()))
}

/// [`add_f32`]'s rule in bfloat16 (the sum taken in f32, rounded to nearest even).
fn add_bf16(a: bf16, b: bf16) -> bf16 {
    bf16::from_f32(add_f32(a.to_f32(), b.to_f32()))
}

/// [`add_f32`]'s rule in f64.
fn add_f64(a: f64, b: f64) -> f64 {
    let sum = a + b;
    match sum.is_nan() {
        true => nan_sum_f64(a, b),
        false => sum,
    }
}

/// [`add_f64`] where the sum is NaN.
#[cold]
#[inline(never)]
fn nan_sum_f64(a: f64, b: f64) -> f64 {
    const QUIET: u64 = 0x0008_0000_0000_0000;
    match (a.is_nan(), b.is_nan()) {
        (true, _) => f64::from_bits(a.to_bits() | QUIET),
        (false, true) => f64::from_bits(b.to_bits() | QUIET),
        (false, false) => f64::from_bits(0x7ff8_0000_0000_0000),
    }
}

/// Whether [`pad_backward`] takes `dtype` (the floats but float8e8m0, and the complex types).
pub(crate) fn has_gradient(dtype: DataType) -> bool {
    use DataType::*;
    matches!(dtype, Float32 | Float64 | Float16 | Bfloat16 | Complex64 | Complex128) || Float8::new(dtype).is_some()
}

fn unsupported(dtype: DataType) -> PadError {
    let float = dtype.name().starts_with("float");
    let reason = match float {
        true => "its gradient is taken in float16, bfloat16, float32, float64, the float8s but float8e8m0 (which has no zero) and the complex types only",
        false => "integer, bool and string tensors have no gradient",
    };
    PadError::Unsupported { dtype: dtype.name(), reason: reason.into() }
}

/// The gradient in elements of `T`: `rows` adds rows of terms ([`Rows`]); `sum_one(src,
/// images)` is one element's sum of `src` at `images` ([`gathered`]).
fn run<T: bytemuck::Pod + Send + Sync>(
    plan: &PadPlan,
    bytes: &[u8],
    arena: Option<&OutputArena>,
    parts: usize,
    zero: T,
    rows: Rows<'_, T>,
    sum_one: &SumLanes<'_, T>,
) -> Result<Vec<u8>> {
    let gather = Gather::new(plan, parts, zero, rows, sum_one);
    let grad = typed::<T>(bytes);
    let len = plan.in_len() * parts;
    let size = len * std::mem::size_of::<T>();
    // Not zero-filled first: the gather writes every element.
    let mut out = output_bytes(size, "the gradient", arena)?;
    let spare = &mut out.spare_capacity_mut()[..size];
    // SAFETY: any bytes, initialised or not, are a MaybeUninit<T>.
    let (head, values, _) = unsafe { spare.align_to_mut::<MaybeUninit<T>>() };
    if head.is_empty() && values.len() == len {
        // In place, the allocation aligned for T (as allocators align it).
        gather.run(&grad, values);
    } else {
        let mut values = Vec::with_capacity(len);
        gather.run(&grad, &mut values.spare_capacity_mut()[..len]);
        // SAFETY: `Gather::run` wrote all `len` values.
        unsafe { values.set_len(len) };
        write(spare, bytemuck::cast_slice::<T, u8>(&values));
    }
    // SAFETY: `Gather::run` wrote every value of grad_in, so every byte (each branch of
    // `Gather::indices` writes all of its index's span: a copy, a fill, a sum from zero or
    // the axis inside, index by index).
    unsafe { out.set_len(size) };
    Ok(out)
}

/// Writes `src` into `dst`, of its length, by the forward pad's copy ([`crate::copy::copy_bytes`]:
/// glibc's `memmove` runs 10 to 13 times slower on AMD's Zen at some distances between the two,
/// and the kept rows of a gradient land on them as a pad's rows do).
fn write<T: Copy>(dst: &mut [MaybeUninit<T>], src: &[T]) {
    assert_eq!(dst.len(), src.len(), "a write of the source's length");
    let n = std::mem::size_of_val(src);
    // SAFETY: each view covers exactly its slice's bytes (the lengths are equal); any byte is
    // a MaybeUninit<u8>, and what is written into dst is src's bytes, so its elements are
    // initialised Ts after; shared and exclusive borrows do not overlap.
    let (to, from) = unsafe {
        let to = std::slice::from_raw_parts_mut(dst.as_mut_ptr().cast::<MaybeUninit<u8>>(), n);
        (to, std::slice::from_raw_parts(src.as_ptr().cast::<MaybeUninit<u8>>(), n))
    };
    crate::copy::copy_bytes(to, from);
}

/// `src` into `dst` (of its length) where it is a strip's few values: four at a time as
/// whole arrays, inlined (a call to `memmove` a lane and term costs more than its copy).
fn copy_short<T: Copy>(dst: &mut [MaybeUninit<T>], src: &[T]) {
    if src.len() > 32 {
        return write(dst, src);
    }
    let mut dst = dst.chunks_exact_mut(4);
    let mut src = src.chunks_exact(4);
    for (d, s) in (&mut dst).zip(&mut src) {
        let values: [T; 4] = s.try_into().expect("four values");
        d.copy_from_slice(&values.map(MaybeUninit::new));
    }
    dst.into_remainder().iter_mut().zip(src.remainder()).for_each(|(d, &s)| *d = MaybeUninit::new(s));
}

/// `src` reversed into `dst` (of its length): eight at a time as whole arrays (one load, a
/// shuffle and one store each, where element by element each store is its own and the rows'
/// additions read them back wider).
fn reverse_into<T: Copy>(dst: &mut [T], src: &[T]) {
    let mut dst = dst.chunks_exact_mut(8);
    let mut src = src.rchunks_exact(8);
    for (d, s) in (&mut dst).zip(&mut src) {
        let mut values: [T; 8] = s.try_into().expect("eight values");
        values.reverse();
        d.copy_from_slice(&values);
    }
    dst.into_remainder().iter_mut().zip(src.remainder().iter().rev()).for_each(|(d, &s)| *d = s);
}

/// `dst` filled with `value`, now initialised.
fn filled<T: Copy>(dst: &mut [MaybeUninit<T>], value: T) -> &mut [T] {
    dst.fill(MaybeUninit::new(value));
    // SAFETY: every element was just written.
    unsafe { &mut *(dst as *mut [MaybeUninit<T>] as *mut [T]) }
}

/// `row`'s first `len` values, grown with `zero` to that length where it is shorter: an
/// innermost axis's scratch rows made on first use, so that a gather whose strips all take the
/// type's strip sums (the audio case) allocates and zeroes none.
fn grown<T: Copy>(row: &mut Vec<T>, len: usize, zero: T) -> &mut [T] {
    if row.len() < len {
        row.resize(len, zero);
    }
    &mut row[..len]
}

/// An initialised row seen as one to write (the gather's scratch, passed where grad_in is).
fn as_uninit<T>(row: &mut [T]) -> &mut [MaybeUninit<T>] {
    // SAFETY: same layout; the gather only writes initialised values through it, so the row
    // stays initialised for its owner.
    unsafe { &mut *(row as *mut [T] as *mut [MaybeUninit<T>]) }
}

/// `bytes` as values of `T`: borrowed where aligned for T, else copied.
fn typed<T: bytemuck::Pod>(bytes: &[u8]) -> std::borrow::Cow<'_, [T]> {
    match bytemuck::try_cast_slice(bytes) {
        Ok(values) => std::borrow::Cow::Borrowed(values),
        Err(_) => bytes.chunks_exact(std::mem::size_of::<T>()).map(bytemuck::pod_read_unaligned).collect(),
    }
}

/// `sum_one(srcs, images, sums)`: each lane's sum of its `srcs[l]` at `images` ([`gathered`]).
type SumLanes<'a, T> = dyn Fn(&[&[T]], &[usize], &mut [T]) + Sync + 'a;

/// Rows of the innermost axis gathered side by side where their strips are short
/// ([`Gather`]'s `lanes`): each strip's sums in every lane one sum, its calls (and a 16-bit
/// type's conversions) made once for all of them.
const STRIP_LANES: usize = 32;

/// Rows gathered side by side where a strip of one index is a long chain of additions
/// ([`gathered`]; float32's two registers of eight on x86-64, `chains::f32_chains`).
const CHAIN_LANES: usize = 16;

/// The most rows of the innermost axis gathered at once ([`Gather::innermost`]).
const LANES: usize = STRIP_LANES;

/// Bytes of grad_in's rows gathered side by side for one sum at most ([`Gather::scratch`]).
const LANES_BYTES: usize = 64 << 10;

/// Indices of a strip up to which rows are gathered in lanes, each strip's sums in every lane
/// taken as one ([`Gather`]'s `lanes`).
const LANES_MAX_STRIP: usize = 32;

/// Terms of a strip of one index from which rows are gathered in lanes ([`Gather`]'s `lanes`).
const LANES_MIN_TERMS: usize = 16;

/// Each lane's sum of its `srcs[l]` at `images`, in their order
/// ([`ordered_sum`](crate::adjoint::ordered_sum)) into `sums[l]`: `add` inlined (where a row
/// of one would take a call a term), and [`CHAIN_LANES`] lanes' additions interleaved (each
/// lane's sum a chain of additions, the lanes' independent).
fn gathered<T: Copy>(srcs: &[&[T]], images: &[usize], sums: &mut [T], zero: T, add: impl Fn(T, T) -> T) {
    use crate::adjoint::ordered_sum;
    let Ok(lanes) = <&[&[T]; CHAIN_LANES]>::try_from(srcs) else {
        for (src, sum) in srcs.iter().zip(sums) {
            *sum = ordered_sum(images.iter().map(|&o| src[o]), images.len(), zero, &add);
        }
        return;
    };
    // ordered_sum's order, written out lane by lane (a strip's index has several images).
    debug_assert!(images.len() > 1, "a sum of one term is that term");
    // Every image inside every lane, checked once: the reads below are not (their checks, a
    // lane and term each, had cost as much as the additions).
    let len = lanes.iter().map(|lane| lane.len()).min().unwrap_or(0);
    assert!(images.iter().all(|&o| o < len), "an image past grad_out's {len} values");
    let fold = |images: &[usize]| {
        let mut part = [zero; CHAIN_LANES];
        for &o in images {
            for l in 0..CHAIN_LANES {
                // SAFETY: o < len, every lane's length at least (checked above).
                part[l] = add(part[l], unsafe { *lanes[l].get_unchecked(o) });
            }
        }
        part
    };
    let block = block_len(images.len());
    if images.len() <= block {
        sums.copy_from_slice(&fold(images));
        return;
    }
    let mut total = [zero; CHAIN_LANES];
    for images in images.chunks(block) {
        let part = fold(images);
        for l in 0..CHAIN_LANES {
            total[l] = add(total[l], part[l]);
        }
    }
    sums.copy_from_slice(&total);
}

/// [`gathered`] for float32 and float64 (and their complex types' parts), the hardware's
/// additions all through, no NaN check an addition: a NaN is kept by every later addition, so
/// a lane whose sum is no NaN had none, and its sum is `add`'s; a lane whose sum is NaN is
/// summed again by `add` (the one NaN rule). The checks had been two of an addition's five
/// instructions (224 x 224 edge 100: its corners' long sums most of its time).
fn gathered_ieee<T>(srcs: &[&[T]], images: &[usize], sums: &mut [T], zero: T, add: impl Fn(T, T) -> T)
where
    T: Copy + PartialEq + std::ops::Add<Output = T>,
{
    gathered(srcs, images, sums, zero, |a, b| a + b);
    nan_sums_again(srcs, images, sums, zero, add);
}

/// Each lane whose sum by the hardware's additions is NaN summed again by `add`, in order (the
/// one NaN rule: which NaN the sum keeps): [`gathered_ieee`]'s and `chains::f32_chains`' last step.
fn nan_sums_again<T>(srcs: &[&[T]], images: &[usize], sums: &mut [T], zero: T, add: impl Fn(T, T) -> T)
where
    T: Copy + PartialEq,
{
    #[allow(clippy::eq_op)] // a NaN, the one value unequal to itself
    for (src, sum) in srcs.iter().zip(sums).filter(|(_, sum)| **sum != **sum) {
        *sum = crate::adjoint::ordered_sum(images.iter().map(|&o| src[o]), images.len(), zero, &add);
    }
}

/// float32's [`SumLanes`]: on x86-64, rows' long chains sixteen at once in AVX registers where
/// the CPU has them (`chains::f32_chains`); a few rows or terms (an edge's pad of 2 on a row:
/// three terms, one row, where the chains' setup made f32 \[1,64,256,256\] 1.3x as slow), and
/// elsewhere, [`gathered_ieee`].
fn f32_gathered(srcs: &[&[f32]], images: &[usize], sums: &mut [f32]) {
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    if srcs.len() > 1 && images.len() >= LANES_MIN_TERMS {
        return chains::f32_chains(srcs, images, sums);
    }
    gathered_ieee(srcs, images, sums, 0.0, add_f32);
}

/// A type's rows of terms added: `add(acc, terms)` adds `terms` into `acc` element by
/// element, each the type's own rounded addition; `start(acc, terms)` is `add` into a row of
/// zeros, `acc`'s values ignored (a sum's first term: a 16-bit float's written without
/// converting to f32 and back, [`start_rows_16`]).
/// `strip`, where the type has one: a strip's sums in one lane ([`StripSum`]) without the
/// rows' staging.
#[derive(Clone, Copy)]
struct Rows<'a, T> {
    add: &'a RowAdd<'a, T>,
    start: &'a RowAdd<'a, T>,
    strip: Option<&'a StripSum<'a, T>>,
    /// Where the type has it: a row of grad_in on the innermost axis whose index on the axis
    /// above has several images, summed in registers ([`ImageRows`]).
    image_rows: Option<&'a ImageRows<'a, T>>,
    /// Where the type has it: whole rows of the innermost axis whose strips `strip` all takes
    /// ([`WholeRows`]).
    whole_rows: Option<&'a WholeRows<'a, T>>,
}

impl<'a, T: Copy> Rows<'a, T> {
    /// `add`, and `start` as `add` into the zeros a sum fills its row with first.
    fn adding(add: &'a RowAdd<'a, T>) -> Self {
        Rows { add, start: add, strip: None, image_rows: None, whole_rows: None }
    }
}

/// `image_rows(axis, srcs, dst)`: grad_in's row `dst` along the innermost axis `axis` (of
/// elements of one value) for an index of the axis above with several images, `srcs` grad_out's
/// rows at them in order: the sum of those rows each gathered along `axis`, in the documented
/// nest, without staging each image's gathered row and adding it a pass each. A block of rows
/// at most (the gather stages more).
type ImageRows<'a, T> = dyn Fn(&GatherAxis, &[&[T]], &mut [MaybeUninit<T>]) + Sync + 'a;

#[cfg(test)]
thread_local! {
    /// Rows of several images [`ImageRows`] summed on this thread (tests see the way taken).
    static IMAGE_ROWS_SUMMED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    /// Rows [`whole_rows`] wrote, on this thread.
    static WHOLE_ROWS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// The most terms (an index's images along the innermost axis) [`f32_image_rows`] sums
/// eight indices at a time in registers (more, an edge's corner, an index at a time), and the
/// most rows (along the axis above) the gather hands it without allocating.
const IMAGE_ROWS_MAX_TERMS: usize = 8;

/// `strip_sum(srcs, strip, [i, n, at], dsts)`: in each lane, the sums of a [`Strip`] of few
/// terms (a block's at most), each from zero in the terms' order, for its `n` indices from
/// the `i`-th, written into the lane's `dsts[l]` from `at`; `srcs[l]` is grad_out inside the
/// axes outside. One call for every lane: a call a lane cost as much as its sums.
type StripSum<'a, T> = dyn Fn(&[&[T]], &Strip, [usize; 3], &mut [&mut [MaybeUninit<T>]]) + Sync + 'a;

/// `whole_rows(srcs, from, strips, dsts)`: each lane's whole row of the innermost axis (of
/// elements of one value, no index cropped, every strip of a length and terms the type's
/// [`StripSum`] takes): its kept terms, `srcs[l]` from `from`, copied into `dsts[l]`, then its
/// `strips` summed over theirs, lane by lane ([`whole_rows`]).
type WholeRows<'a, T> = dyn Fn(&[&[T]], usize, &[Strip], &mut [&mut [MaybeUninit<T>]]) + Sync + 'a;

/// [`WholeRows`] with `strip(src, strip, dst)` a lane's strip's sums into `dst` (the strip's
/// indices of its row), inlined: a row's strips summed while its copy is in the closest cache.
/// On one core of an Intel Xeon VM, f16 \[8,4096,256\] reflected by 8 on its last axis took
/// 1.19-1.21 ms by the minimum (a bare copy of its rows' bytes: 1.17-1.19) against 1.40-1.45
/// for every lane's copy and then every lane's strips, and as long with each strip a call of
/// its own; f32 \[1,3,224,224\] reflected by 100, 95-98 µs against 99-110.
#[cfg_attr(not(all(target_arch = "x86_64", not(miri))), allow(dead_code))]
#[inline(always)]
fn whole_rows<T: Copy>(
    srcs: &[&[T]],
    from: usize,
    strips: &[Strip],
    dsts: &mut [&mut [MaybeUninit<T>]],
    strip: impl Fn(&[T], &Strip, &mut [MaybeUninit<T>]),
) {
    #[cfg(test)]
    WHOLE_ROWS.set(WHOLE_ROWS.get() + srcs.len());
    for (src, dst) in srcs.iter().zip(dsts.iter_mut()) {
        let n = dst.len();
        write(dst, &src[from..][..n]);
        for s in strips {
            strip(src, s, &mut dst[s.ks.clone()]);
        }
    }
}

/// float32's rows: [`add_rows_f32`], and its strips (whole rows where it can) and rows of
/// several images eight indices at a time where the target has SSE2 ([`f32_sums_sse2`]).
fn f32_rows() -> Rows<'static, f32> {
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    let strip: Option<&StripSum<'_, f32>> = Some(&|srcs, strip, [i, n, at], dsts| {
        for (src, dst) in srcs.iter().zip(dsts.iter_mut()) {
            f32_sums_sse2(std::slice::from_ref(src), &strip.first, &strip.ascends, i, &mut dst[at..][..n]);
        }
    });
    #[cfg(not(all(target_arch = "x86_64", not(miri))))]
    let strip = None;
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    let image_rows: Option<&ImageRows<'_, f32>> = Some(&f32_image_rows);
    #[cfg(not(all(target_arch = "x86_64", not(miri))))]
    let image_rows = None;
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    let whole: Option<&WholeRows<'_, f32>> = Some(&|srcs, from, strips, dsts| {
        whole_rows(srcs, from, strips, dsts, |src, strip, dst| {
            f32_sums_sse2(&[src], &strip.first, &strip.ascends, 0, dst)
        })
    });
    #[cfg(not(all(target_arch = "x86_64", not(miri))))]
    let whole = None;
    Rows { strip, image_rows, whole_rows: whole, ..Rows::adding(&add_rows_f32) }
}

/// float32's [`ImageRows`] in SSE2 registers ([`f32_sums_sse2`]), the innermost axis cut where
/// its indices' images change: each strip, its kept indices between (their kept positions),
/// its cropped ones (+0.0: sums of no term). Every value of grad_out read once and grad_in's
/// written once, where staging reads and writes each image's row twice more (224 x 224
/// reflected by 100: most of its rows have two images on H, most of their indices two on W).
/// A strip of more than [`IMAGE_ROWS_MAX_TERMS`] terms (an edge's corner) an index at a
/// time: each row's sum of its terms, every row's chain at once (`chains::f32_chains`), then
/// their sum.
#[cfg(all(target_arch = "x86_64", not(miri)))]
fn f32_image_rows(axis: &GatherAxis, srcs: &[&[f32]], dst: &mut [MaybeUninit<f32>]) {
    use eights::f32_sums_sse2_unchecked;
    assert_eq!(dst.len(), axis.in_len, "a row of the innermost axis");
    // Every term of the row's sums inside every row of grad_out, checked once for its calls.
    assert!(srcs.iter().all(|src| src.len() >= axis.reach), "a row of grad_out shorter than its axis's images");
    let mut k = 0;
    for strip in axis.strips.iter().map(Some).chain([None]) {
        // Up to the strip: kept indices of their kept position alone, cropped ones of none.
        let end = strip.map_or(axis.in_len, |s| s.ks.start);
        let kept = axis.kept.start.clamp(k, end)..axis.kept.end.clamp(k, end);
        filled(&mut dst[k..kept.start], 0.0);
        let from = axis.kept_from + kept.start.saturating_sub(axis.kept.start);
        // SAFETY: kept indices read from kept_from on, within the axis's reach (checked).
        unsafe { f32_sums_sse2_unchecked(srcs, &[from], &[true], 0, &mut dst[kept.clone()]) };
        filled(&mut dst[kept.end..end], 0.0);
        let Some(strip) = strip else { break };
        match strip.first.len() <= IMAGE_ROWS_MAX_TERMS {
            // SAFETY: the strip's terms over its indices are within the axis's reach (checked),
            // its descending ones at 0 or above (GatherAxis::reach_of's assertion).
            true => unsafe {
                f32_sums_sse2_unchecked(srcs, &strip.first, &strip.ascends, 0, &mut dst[strip.ks.clone()])
            },
            false => {
                let (mut listed, mut sums) = (Vec::with_capacity(strip.first.len()), vec![0.0; srcs.len()]);
                for (k, d) in strip.ks.clone().zip(&mut dst[strip.ks.clone()]) {
                    let images = axis.images_of(k, &mut listed);
                    chains::f32_chains(srcs, images, &mut sums);
                    d.write(crate::adjoint::ordered_sum(sums.iter().copied(), sums.len(), 0.0, add_f32));
                }
            }
        }
        k = strip.ks.end;
    }
}

/// float16's exponent bits and quiet bit (a NaN's exponent all ones, a non-zero fraction).
const F16_EXPONENT: u16 = 0x7c00;
const F16_QUIET: u16 = 0x0200;
/// bfloat16's.
const BF16_EXPONENT: u16 = 0x7f80;
const BF16_QUIET: u16 = 0x0040;

/// `acc` set to `+0.0 + terms` in a 16-bit float type, in bits: each term is exact in f32,
/// so the sum is the term but that -0.0 becomes +0.0 and a NaN is quieted ([`add_f32`]'s rule;
/// narrowed back, its payload is the term's), as [`add_rows_16`] into zeros gives it, without
/// its three conversions.
fn start_rows_16<H: bytemuck::Pod>(acc: &mut [H], terms: &[H], exponent: u16, quiet: u16) {
    let acc: &mut [u16] = bytemuck::cast_slice_mut(acc);
    let terms: &[u16] = bytemuck::cast_slice(terms);
    for (a, &t) in acc.iter_mut().zip(terms) {
        let magnitude = t & 0x7fff;
        *a = match magnitude {
            0 => 0,
            m if m > exponent => t | quiet,
            _ => t,
        };
    }
}

/// [`add_f32`] over rows: eight at a time in SSE2 registers where the target has them (every
/// x86-64), else as arrays ([`plain_eight`], which LLVM vectorised as 4 + 2 + 1 + 1 lanes and a
/// shuffle of the eight NaN checks: 39 % of the 224 reflect gradient's samples).
fn add_rows_f32(acc: &mut [f32], terms: &[f32]) {
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    let eight = |a: &mut [f32; 8], t: &[f32; 8]| {
        use std::arch::x86_64::*;
        // SAFETY: unaligned loads and stores of the eight values each array holds; SSE2 is
        // part of x86-64.
        unsafe {
            let low = _mm_add_ps(_mm_loadu_ps(a.as_ptr()), _mm_loadu_ps(t.as_ptr()));
            let high = _mm_add_ps(_mm_loadu_ps(a.as_ptr().add(4)), _mm_loadu_ps(t.as_ptr().add(4)));
            let nan = _mm_or_ps(_mm_cmpunord_ps(low, low), _mm_cmpunord_ps(high, high));
            if _mm_movemask_ps(nan) != 0 {
                return false;
            }
            _mm_storeu_ps(a.as_mut_ptr(), low);
            _mm_storeu_ps(a.as_mut_ptr().add(4), high);
        }
        true
    };
    #[cfg(not(all(target_arch = "x86_64", not(miri))))]
    let eight = |a: &mut [f32; 8], t: &[f32; 8]| plain_eight(a, t, f32::is_nan);
    add_rows_by_eights(acc, terms, add_f32, eight);
}

/// [`add_f64`] over rows (as [`add_rows_f32`], four SSE2 registers of two).
fn add_rows_f64(acc: &mut [f64], terms: &[f64]) {
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    let eight = |a: &mut [f64; 8], t: &[f64; 8]| {
        use std::arch::x86_64::*;
        // SAFETY: unaligned loads and stores of the eight values each array holds; SSE2 is
        // part of x86-64.
        unsafe {
            let sums: [__m128d; 4] = std::array::from_fn(|j| {
                _mm_add_pd(_mm_loadu_pd(a.as_ptr().add(2 * j)), _mm_loadu_pd(t.as_ptr().add(2 * j)))
            });
            let nan = sums.iter().fold(_mm_setzero_pd(), |m, &s| _mm_or_pd(m, _mm_cmpunord_pd(s, s)));
            if _mm_movemask_pd(nan) != 0 {
                return false;
            }
            for (j, &s) in sums.iter().enumerate() {
                _mm_storeu_pd(a.as_mut_ptr().add(2 * j), s);
            }
        }
        true
    };
    #[cfg(not(all(target_arch = "x86_64", not(miri))))]
    let eight = |a: &mut [f64; 8], t: &[f64; 8]| plain_eight(a, t, f64::is_nan);
    add_rows_by_eights(acc, terms, add_f64, eight);
}

/// `terms` added into `acc` (the shorter's length) eight at a time by `eight`, which stores
/// the eight sums and says so, or stores nothing where one is NaN; those eight, and the rest
/// past the last eight, by `add` (the type's addition under the NaN rule).
fn add_rows_by_eights<F: Copy>(
    acc: &mut [F],
    terms: &[F],
    add: impl Fn(F, F) -> F,
    eight: impl Fn(&mut [F; 8], &[F; 8]) -> bool,
) {
    let n = acc.len().min(terms.len());
    let mut acc = acc[..n].chunks_exact_mut(8);
    let mut terms = terms[..n].chunks_exact(8);
    for (a, t) in (&mut acc).zip(&mut terms) {
        let (a, t): (&mut [F; 8], &[F; 8]) = (a.try_into().expect("eight"), t.try_into().expect("eight"));
        if !eight(a, t) {
            a.iter_mut().zip(t).for_each(|(a, &t)| *a = add(*a, t));
        }
    }
    acc.into_remainder().iter_mut().zip(terms.remainder()).for_each(|(a, &t)| *a = add(*a, t));
}

/// Eight plain additions stored where none is NaN ([`add_rows_by_eights`]'s `eight` without
/// registers of the target's).
#[cfg_attr(all(target_arch = "x86_64", not(miri)), allow(dead_code))] // x86-64 has its own
fn plain_eight<F>(a: &mut [F; 8], t: &[F; 8], is_nan: impl Fn(F) -> bool) -> bool
where
    F: Copy + std::ops::Add<Output = F>,
{
    let sums: [F; 8] = std::array::from_fn(|i| a[i] + t[i]);
    let stored = !sums.iter().any(|&s| is_nan(s));
    if stored {
        *a = sums;
    }
    stored
}

/// A 16-bit float type's rows added in f32 and rounded back at every addition, converted a
/// stretch at a time (half's slice conversions, vectorised where the machine has them).
fn add_rows_16<H: Copy>(acc: &mut [H], terms: &[H])
where
    [H]: HalfFloatSliceExt,
{
    // Short rows (a border's elements one at a time) on small buffers: a long one's would
    // cost more to set up than the row's additions.
    match acc.len() {
        0..=8 => add_stretches(acc, terms, &mut [0f32; 8], &mut [0f32; 8]),
        _ => add_stretches(acc, terms, &mut [0f32; 256], &mut [0f32; 256]),
    }
}

/// [`add_rows_16`] a stretch of `a.len()` at a time, `a` and `t` its f32 buffers.
fn add_stretches<H: Copy>(acc: &mut [H], terms: &[H], a: &mut [f32], t: &mut [f32])
where
    [H]: HalfFloatSliceExt,
{
    let stretch = a.len();
    for (acc, terms) in acc.chunks_mut(stretch).zip(terms.chunks(stretch)) {
        let n = acc.len();
        acc.convert_to_f32_slice(&mut a[..n]);
        terms.convert_to_f32_slice(&mut t[..n]);
        add_rows_f32(&mut a[..n], &t[..n]);
        acc.convert_from_f32_slice(&a[..n]);
    }
}

/// Whether a type's strip sums ([`StripSum`], [`WholeRows`]) take a strip of `n` indices of
/// `terms` terms each: a block of terms at most, and not one index's long chain (an edge's
/// corner, from [`LANES_MIN_TERMS`] terms), which [`gathered`] sums in many rows at once (f32
/// \[1,3,224,224\] edge 100 took 2.8x as long a row at a time).
fn strip_sum_takes(n: usize, terms: usize) -> bool {
    terms <= BLOCK && (n > 1 || terms < LANES_MIN_TERMS)
}

/// The adjoint as a gather, axis by axis the outermost first: an input index of one image
/// takes the gradient inside that image as it is (a copy where no axis inside is touched);
/// one of several sums them (each the gradient inside its image) in the documented order,
/// row by row. Runs of identity axes are merged: those at the end into the rows' unit, the
/// rest into one axis each.
struct Gather<'a, T> {
    axes: Vec<GatherAxis>,
    zero: T,
    rows: Rows<'a, T>,
    /// One element's sum ([`gathered`]): a strip of one index (an edge's corner, its pads' length
    /// of terms).
    sum_one: &'a SumLanes<'a, T>,
    /// Rows of the innermost axis gathered at a time: [`CHAIN_LANES`] where it has a strip
    /// of one index with [`LANES_MIN_TERMS`] terms or more, whose chain of additions the
    /// lanes interleave; else [`STRIP_LANES`] where its strips are of [`LANES_MAX_STRIP`]
    /// indices or fewer, each strip's sums in every lane summed as one row; else 1
    /// (elsewhere rows side by side only cost their writes' order).
    lanes: usize,
}

/// One axis of a [`Gather`]: its length in grad_in, the values an index spans in grad_in and
/// in grad_out, whether the pad touches it (`false`: a merged run of identity axes, each
/// index its own one image), its longest run of indices of one image each, consecutive (`copy`,
/// the first's image `copy_from`), its kept indices (`kept`, the first's kept position
/// `kept_from`): on the innermost axis with elements of one value, one copy before the
/// strips' sums overwrite theirs; and its [`Strip`]s.
struct GatherAxis {
    in_len: usize,
    in_stride: usize,
    out_stride: usize,
    touched: bool,
    copy: std::ops::Range<usize>,
    copy_from: usize,
    kept: std::ops::Range<usize>,
    kept_from: usize,
    strips: Vec<Strip>,
    /// One past the furthest image any index reads ([`GatherAxis::reach_of`]): a row of
    /// grad_out this long along the axis holds every term of its sums.
    #[cfg_attr(not(all(target_arch = "x86_64", not(miri))), allow(dead_code))] // f32_image_rows's
    reach: usize,
}

/// Consecutive indices `ks` of an axis with as many images each (several), the t-th image of
/// index `ks.start + i` at `first[t] + i` (`ascends[t]`) or `first[t] - i`: where the axis is
/// the innermost with elements of one value, their sums are rows, a reflection's read
/// backwards.
struct Strip {
    ks: std::ops::Range<usize>,
    first: Vec<usize>,
    ascends: Vec<bool>,
}

impl Strip {
    /// The strips of the indices with several images, in order: the pads' runs cut where
    /// one starts or ends (within each piece the same runs read every index, and the kept
    /// positions follow the index), those of several images. Their cost is the runs', not
    /// the indices'. Every other index has its kept position alone, or no image where it
    /// was cropped away (the pads read kept indices only).
    fn all(runs: &[Run], map: &AxisMap) -> Vec<Strip> {
        let kept = map.crop_start..map.crop_start + map.kept;
        // Sized up front: made every call, where growing a push at a time cost more than the
        // audio case's sums.
        let mut cuts = Vec::with_capacity(2 * runs.len() + 2);
        cuts.extend(runs.iter().flat_map(|r| [r.indices().start, r.indices().end]));
        cuts.extend([kept.start, kept.end]);
        cuts.sort_unstable();
        cuts.dedup();
        let mut strips = Vec::with_capacity(cuts.len());
        for piece in cuts.windows(2).map(|w| w[0]..w[1]) {
            let k = piece.start;
            let (mut first, mut ascends) = (Vec::with_capacity(runs.len() + 1), Vec::with_capacity(runs.len() + 1));
            // Each run's images of the piece's first index, in the runs' (ascending) order;
            // an edge's run is one index's every image.
            for r in runs.iter().filter(|r| r.indices().contains(&k)) {
                match r.slope {
                    0 => first.extend(r.o..r.o + r.len),
                    1 => first.push(r.o + (k - r.k)),
                    _ => first.push(r.o + (r.k - k)),
                }
                ascends.extend(std::iter::repeat_n(r.slope >= 0, first.len() - ascends.len()));
            }
            if kept.contains(&k) {
                first.push(map.pad_before + k - map.crop_start);
                ascends.push(true);
            }
            debug_assert!(kept.contains(&k) || first.is_empty(), "cropped index {k} read by a pad");
            if first.len() > 1 {
                strips.push(Strip { ks: piece, first, ascends });
            }
        }
        strips
    }
}

impl GatherAxis {
    /// Index `k`'s images in the sums' order: in the run of one image each (all of a merged
    /// run of identity axes), in a strip (its first index's as they are, the others' written
    /// into `images`), a kept index's own, or none.
    fn images_of<'s>(&'s self, k: usize, images: &'s mut Vec<usize>) -> &'s [usize] {
        images.clear();
        if !self.touched || self.copy.contains(&k) {
            images.push(self.copy_from + (k - self.copy.start));
        } else if let Some(strip) = self.strips.get(self.strips.partition_point(|s| s.ks.end <= k)) {
            match k.checked_sub(strip.ks.start) {
                Some(0) => return &strip.first,
                Some(i) if k < strip.ks.end => {
                    let image = |(&first, &up): (&usize, &bool)| if up { first + i } else { first - i };
                    images.extend(strip.first.iter().zip(&strip.ascends).map(image));
                }
                _ => {}
            }
        }
        if images.is_empty() && self.touched && self.kept.contains(&k) {
            images.push(self.kept_from + (k - self.kept.start));
        }
        images
    }

    /// A touched axis (`map`, of `mode`) or, without one, a merged run of identity axes.
    fn new(in_len: usize, in_stride: usize, out_stride: usize, touched: Option<(&AxisMap, Mode)>) -> GatherAxis {
        let Some((map, mode)) = touched else {
            let (copy, kept, strips) = (0..in_len, 0..in_len, Vec::new());
            return GatherAxis {
                in_len,
                in_stride,
                out_stride,
                touched: false,
                copy,
                copy_from: 0,
                kept,
                kept_from: 0,
                strips,
                reach: in_len,
            };
        };
        // One image each: kept indices, whose images are their kept positions, consecutive.
        let ones = one_image_run(map, mode);
        let (copy, copy_from) = (map.crop_start + ones.start..map.crop_start + ones.end, map.pad_before + ones.start);
        let (kept, kept_from) = (map.crop_start..map.crop_start + map.kept, map.pad_before);
        let strips = Strip::all(&pad_runs(map, mode), map);
        let reach = GatherAxis::reach_of(&kept, kept_from, &strips);
        GatherAxis { in_len, in_stride, out_stride, touched: true, copy, copy_from, kept, kept_from, strips, reach }
    }

    /// One past the furthest image the kept indices (the copied run among them) and the
    /// strips read, each strip's descending terms asserted to stay at 0 or above over its
    /// indices.
    fn reach_of(kept: &std::ops::Range<usize>, kept_from: usize, strips: &[Strip]) -> usize {
        let mut reach = if kept.is_empty() { 0 } else { kept_from + kept.len() };
        for strip in strips {
            for (&first, &up) in strip.first.iter().zip(&strip.ascends) {
                let len = strip.ks.len();
                assert!(up || first + 1 >= len, "a strip's term from {first} descends below 0 over {len} indices");
                reach = reach.max(if up { first + len } else { first + 1 });
            }
        }
        reach
    }
}

/// One axis's rows for its sums, made once per thread: the sum so far of a block (`part`) and
/// one term's gradient inside its image (`term`), each an index's span of grad_in.
struct Scratch<T> {
    part: Vec<T>,
    term: Vec<T>,
    /// On the innermost axis, a strip's sums in every lane, side by side.
    sums: Vec<T>,
    /// An index's images ([`GatherAxis::images_of`]).
    images: Vec<usize>,
}

impl<'a, T: Copy + Send + Sync> Gather<'a, T> {
    fn new(plan: &PadPlan, parts: usize, zero: T, rows: Rows<'a, T>, sum_one: &'a SumLanes<'a, T>) -> Self {
        let maps = plan.axes();
        let last_touched = maps.iter().rposition(|a| !a.is_identity());
        let chunk = parts * last_touched.map_or(plan.in_len(), |d| maps[d + 1..].iter().map(|a| a.in_len).product());
        let mut axes: Vec<GatherAxis> = Vec::new();
        let (mut in_stride, mut out_stride) = (chunk, chunk);
        for a in maps[..last_touched.map_or(0, |d| d + 1)].iter().rev() {
            let merges = a.is_identity() && axes.last().is_some_and(|inner| !inner.touched);
            match merges {
                true => {
                    let run = axes.last_mut().unwrap();
                    run.in_len *= a.in_len;
                    run.copy = 0..run.in_len;
                }
                false => axes.push(GatherAxis::new(
                    a.in_len,
                    in_stride,
                    out_stride,
                    (!a.is_identity()).then_some((a, plan.mode())),
                )),
            }
            in_stride *= a.in_len;
            out_stride *= a.out_len;
        }
        axes.reverse();
        let long_chain = |a: &GatherAxis| {
            a.in_stride == 1 && a.strips.iter().any(|s| s.ks.len() == 1 && s.first.len() >= LANES_MIN_TERMS)
        };
        // Rows side by side where there are several and their strips are short: a strip's
        // sums in every lane one sum (its calls, a 16-bit type's conversions, made once for
        // all), worth its terms' copies into one row.
        let short_strips = |a: &GatherAxis| {
            a.strips.iter().any(|s| s.ks.len() > 1) && a.strips.iter().all(|s| s.ks.len() <= LANES_MAX_STRIP)
        };
        let rows_of_strips = |a: &GatherAxis| axes.len() > 1 && a.in_stride == 1 && short_strips(a);
        let lanes = match axes.last() {
            Some(a) if long_chain(a) => CHAIN_LANES,
            Some(a) if rows_of_strips(a) => STRIP_LANES,
            _ => 1,
        };
        Gather { axes, zero, rows, sum_one, lanes }
    }

    /// grad_in (`out`, every value written) from grad_out (`grad`): the outermost axis's
    /// indices shared among threads where grad_in is large.
    fn run(&self, grad: &[T], out: &mut [MaybeUninit<T>]) {
        if out.is_empty() {
            // An axis of none: no index to gather (and strides of zero).
            return;
        }
        let Some(top) = self.axes.first() else {
            // No axis touched: grad_in is grad_out.
            write(out, grad);
            return;
        };
        let threads = threads();
        let bytes = std::mem::size_of_val(out);
        if threads > 1 && bytes >= PARALLEL_MIN_BYTES && top.in_len >= threads {
            let per_part = top.in_len.div_ceil(threads);
            let parts = out.chunks_mut(per_part * top.in_stride).enumerate().collect();
            share_out(parts, threads, |(i, part): (usize, &mut [MaybeUninit<T>])| {
                let first = i * per_part;
                let indices = first..first + part.len() / top.in_stride;
                self.indices(0, indices, grad, part, &mut self.scratch());
            });
        } else {
            self.indices(0, 0..top.in_len, grad, out, &mut self.scratch());
        }
    }

    /// Rows for the sums of every axis that has any: an index's span; on the innermost axis
    /// with elements of one value, its longest strip's.
    fn scratch(&self) -> Vec<Scratch<T>> {
        let last = self.axes.len() - 1;
        self.axes
            .iter()
            .enumerate()
            .map(|(d, a)| {
                let sums = a.touched;
                let len = match d == last && a.in_stride == 1 {
                    true => a.strips.iter().map(|s| s.ks.len()).max().unwrap_or(1),
                    false => a.in_stride,
                };
                // Above the innermost axis, its rows for one sum side by side.
                let lanes = match d + 1 == last {
                    true => (LANES_BYTES / (len * std::mem::size_of::<T>()).max(1)).clamp(1, self.lanes),
                    false => 1,
                };
                let row = |len: usize| if sums { vec![self.zero; len] } else { Vec::new() };
                match d == last && a.in_stride == 1 {
                    // Every lane's strip side by side, one sum for them all: made on first use
                    // ([`grown`]; strips the type's strip sums take need none).
                    true => Scratch { part: Vec::new(), term: Vec::new(), sums: Vec::new(), images: Vec::new() },
                    false => Scratch { part: row(len), term: row(len * lanes), sums: Vec::new(), images: Vec::new() },
                }
            })
            .collect()
    }

    /// Indices `ks` of axis `d`: `src` is grad_out inside the axes outside `d`, `dst` grad_in
    /// from index `ks.start` (each index `in_stride` values), `scratch` the rows of axes `d..`.
    fn indices(
        &self,
        d: usize,
        ks: std::ops::Range<usize>,
        src: &[T],
        dst: &mut [MaybeUninit<T>],
        scratch: &mut [Scratch<T>],
    ) {
        if d + 1 == self.axes.len() {
            return self.innermost(ks, &[src], &mut [dst], scratch);
        }
        let axis = &self.axes[d];
        let (Scratch { part, term, images: listed, .. }, inner) =
            scratch.split_first_mut().expect("a row set per axis");
        let (stride, inner_len) = (axis.in_stride, self.axes[d + 1].in_len);
        let inside = |o: usize| &src[o * axis.out_stride..][..axis.out_stride];
        let above_innermost = d + 2 == self.axes.len();
        let mut rows = dst.chunks_mut(stride);
        let mut at = ks.start;
        while at < ks.end {
            // Above the innermost axis, indices of one image each, consecutive, in lanes.
            let run = match above_innermost && axis.copy.contains(&at) {
                true => (axis.copy.end.min(ks.end) - at).min(self.lanes),
                false => 1,
            };
            if run > 1 {
                let first = axis.copy_from + (at - axis.copy.start);
                let srcs: [&[T]; LANES] = std::array::from_fn(|l| if l < run { inside(first + l) } else { &[] });
                let mut dsts: [&mut [MaybeUninit<T>]; LANES] =
                    std::array::from_fn(|l| if l < run { rows.next().expect("a row an index") } else { &mut [] });
                self.innermost(0..inner_len, &srcs[..run], &mut dsts[..run], inner);
                at += run;
                continue;
            }
            let here = rows.next().expect("a row an index");
            let images = axis.images_of(at, listed);
            at += 1;
            match images {
                [] => {
                    filled(here, self.zero);
                }
                // One term: the gradient inside its image.
                &[o] => self.indices(d + 1, 0..inner_len, inside(o), here, inner),
                images if above_innermost && self.image_rows(images, &inside, here) => {}
                images => {
                    // The terms' gradients inside their images, made `lanes` at a time (on the
                    // innermost axis their one-index strips' sums side by side), each then
                    // added in the sum's order.
                    let lanes = term.len() / stride;
                    self.sum(images.len(), here, part, |t, into, add| {
                        let lane = t % lanes;
                        if lane == 0 {
                            let batch = &images[t..(t + lanes).min(images.len())];
                            let mut rows = as_uninit(&mut term[..batch.len() * stride]).chunks_mut(stride);
                            match above_innermost {
                                // One row: no lanes to fill.
                                true if batch.len() == 1 => {
                                    let row = rows.next().expect("a row");
                                    self.innermost(0..inner_len, &[inside(batch[0])], &mut [row], inner);
                                }
                                true => {
                                    let srcs: [&[T]; LANES] =
                                        std::array::from_fn(|l| batch.get(l).map_or(&[][..], |&o| inside(o)));
                                    let mut dsts: [&mut [MaybeUninit<T>]; LANES] =
                                        std::array::from_fn(|_| rows.next().unwrap_or_default());
                                    self.innermost(0..inner_len, &srcs[..batch.len()], &mut dsts[..batch.len()], inner);
                                }
                                false => {
                                    for (&o, row) in batch.iter().zip(rows) {
                                        self.indices(d + 1, 0..inner_len, inside(o), row, inner);
                                    }
                                }
                            }
                        }
                        add(into, &term[lane * stride..][..stride]);
                    });
                }
            }
        }
    }

    /// An index's row above the innermost axis, of several `images` (`inside(o)` grad_out's
    /// row at image `o`), summed by the type's [`ImageRows`] where it has one, for a block of
    /// images at most; `false` (nothing written) elsewhere, where the rows are staged.
    fn image_rows<'s>(&self, images: &[usize], inside: &impl Fn(usize) -> &'s [T], here: &mut [MaybeUninit<T>]) -> bool
    where
        T: 's,
    {
        let axis = self.axes.last().expect("an innermost axis");
        let Some(image_rows) = self.rows.image_rows.filter(|_| axis.in_stride == 1) else { return false };
        match images.len() {
            // A block at most: the sums over the rows are in order from zero (past one, in
            // blocks: the staged rows').
            n if n > BLOCK => return false,
            n if n > IMAGE_ROWS_MAX_TERMS => {
                image_rows(axis, &images.iter().map(|&o| inside(o)).collect::<Vec<_>>(), here)
            }
            n => {
                let mut srcs: [&[T]; IMAGE_ROWS_MAX_TERMS] = [&[]; IMAGE_ROWS_MAX_TERMS];
                for (src, &o) in srcs.iter_mut().zip(images) {
                    *src = inside(o);
                }
                image_rows(axis, &srcs[..n], here)
            }
        }
        #[cfg(test)]
        IMAGE_ROWS_SUMMED.set(IMAGE_ROWS_SUMMED.get() + 1);
        true
    }

    /// Indices `ks` of the innermost axis, in each of `srcs.len()` lanes alike (at most
    /// [`LANES`]): lane `l`'s `srcs[l]` is grad_out inside the axes outside, `dsts[l]` grad_in
    /// from index `ks.start` (each index `in_stride` values). Where the axis has elements of
    /// one value its strips' sums are rows, and a strip of one index (an edge's corner) is
    /// summed in every lane at once, their additions interleaved.
    fn innermost(
        &self,
        ks: std::ops::Range<usize>,
        srcs: &[&[T]],
        dsts: &mut [&mut [MaybeUninit<T>]],
        scratch: &mut [Scratch<T>],
    ) {
        let axis = self.axes.last().expect("an innermost axis");
        let Scratch { part, term, sums, images: listed } = &mut scratch[0];
        let (stride, rows_of_one) = (axis.in_stride, axis.in_stride == 1);
        // Rows of one value: every kept index's kept term copied at once (a row's copy is one
        // call of whole words, not a call for each run between strips), the strips' sums
        // written over theirs; not where a strip is one index's long chain (an edge's corner:
        // its copy is one call already, and the 224 edge case ran 6 % slower copying it).
        let kept = axis.kept.start.max(ks.start)..axis.kept.end.min(ks.end);
        let bulk = rows_of_one && kept.len() > 1 && self.lanes != CHAIN_LANES;
        // Whole rows where the type has them: a row's copy and its strips in one call.
        let takes = |s: &Strip| strip_sum_takes(s.ks.len(), s.first.len());
        if let Some(whole_rows) = self
            .rows
            .whole_rows
            .filter(|_| bulk && ks == (0..axis.in_len) && kept == ks && axis.strips.iter().all(takes))
        {
            return whole_rows(srcs, axis.kept_from, &axis.strips, dsts);
        }
        if bulk {
            let from = axis.kept_from + (kept.start - axis.kept.start);
            for (src, dst) in srcs.iter().zip(dsts.iter_mut()) {
                write(&mut dst[kept.start - ks.start..][..kept.len()], &src[from..][..kept.len()]);
            }
        }
        let mut strips = axis.strips.iter().peekable();
        let mut k = ks.start;
        while k < ks.end {
            let at = (k - ks.start) * stride;
            while strips.next_if(|s| s.ks.end <= k).is_some() {}
            if let Some(strip) = strips.peek().filter(|s| rows_of_one && s.ks.contains(&k)) {
                let (i, n) = (k - strip.ks.start, strip.ks.end.min(ks.end) - k);
                k += n;
                if let Some(strip_sum) = self.rows.strip.filter(|_| strip_sum_takes(n, strip.first.len())) {
                    // The type's own way, every lane in one call.
                    strip_sum(srcs, strip, [i, n, at], dsts);
                    continue;
                }
                if n == 1 {
                    // Into the scratch row (a row of the strips' width, a lane's at least).
                    let sums = grown(sums, srcs.len(), self.zero);
                    let images = axis.images_of(k - 1, listed);
                    (self.sum_one)(srcs, images, sums);
                    for (dst, &sum) in dsts.iter_mut().zip(sums.iter()) {
                        dst[at].write(sum);
                    }
                    continue;
                }
                // Every lane's n sums side by side (lane l's at l * n), one sum for them all;
                // one lane's straight into grad_in, an ascending term read where it is.
                let (width, one_lane) = (n * srcs.len(), srcs.len() == 1);
                let acc = match one_lane {
                    true => &mut dsts[0][at..][..n],
                    false => as_uninit(grown(sums, width, self.zero)),
                };
                self.sum(strip.first.len(), acc, grown(part, width, self.zero), |t, into, add| {
                    if let ([src], true) = (srcs, strip.ascends[t]) {
                        return add(into, &src[strip.first[t] + i..][..n]);
                    }
                    let terms = grown(term, width, self.zero);
                    for (src, terms) in srcs.iter().zip(terms.chunks_exact_mut(n)) {
                        match strip.ascends[t] {
                            true => copy_short(as_uninit(terms), &src[strip.first[t] + i..][..n]),
                            false => {
                                let last = strip.first[t] - i;
                                reverse_into(terms, &src[last + 1 - n..=last]);
                            }
                        }
                    }
                    add(into, terms);
                });
                if !one_lane {
                    for (dst, sums) in dsts.iter_mut().zip(sums.chunks_exact(n)) {
                        copy_short(&mut dst[at..][..n], sums);
                    }
                }
                continue;
            }
            // A run of one term each, consecutive, is one copy (in_stride is out_stride here).
            if axis.copy.contains(&k) && axis.copy.end.min(ks.end) - k > 1 {
                let n = axis.copy.end.min(ks.end) - k;
                let o = axis.copy_from + (k - axis.copy.start);
                if !bulk {
                    for (src, dst) in srcs.iter().zip(dsts.iter_mut()) {
                        write(&mut dst[at..][..n * stride], &src[o * stride..][..n * stride]);
                    }
                }
                k += n;
                continue;
            }
            let images = axis.images_of(k, listed);
            if bulk && images.len() == 1 && kept.contains(&k) {
                // Its one term, its kept one, copied with the rest.
                k += 1;
                continue;
            }
            for (src, dst) in srcs.iter().zip(dsts.iter_mut()) {
                let here = &mut dst[at..][..stride];
                let inside = |o: usize| &src[o * stride..][..stride];
                match images {
                    [] => {
                        filled(here, self.zero);
                    }
                    // One term: the gradient inside its image, bits and all (one value
                    // stored, where `write` would call `memmove` for it).
                    &[o] if stride == 1 => _ = here[0].write(src[o]),
                    &[o] => write(here, inside(o)),
                    _ => self.sum(images.len(), here, part, |t, into, add| add(into, inside(images[t]))),
                }
            }
            k += 1;
        }
    }

    /// The sum of `terms` terms in the documented order ([`crate::adjoint::ordered_sum`], row
    /// by row): from zero, a long one in blocks (each from zero into `part`, then added into
    /// `acc`). `add_term(t, into, add)` adds the t-th term into `into` by `add`: the first of a
    /// block's its row's `start`, the others its `add`.
    fn sum(
        &self,
        terms: usize,
        acc: &mut [MaybeUninit<T>],
        part: &mut [T],
        mut add_term: impl FnMut(usize, &mut [T], &RowAdd<'_, T>),
    ) {
        let acc = filled(acc, self.zero);
        let block = block_len(terms);
        let mut block_into = |ts: std::ops::Range<usize>, into: &mut [T]| {
            for t in ts.clone() {
                add_term(t, into, if t == ts.start { self.rows.start } else { self.rows.add });
            }
        };
        if terms <= block {
            block_into(0..terms, acc);
            return;
        }
        for start in (0..terms).step_by(block) {
            part.fill(self.zero);
            block_into(start..(start + block).min(terms), part);
            let add = if start == 0 { self.rows.start } else { self.rows.add };
            add(acc, part);
        }
    }
}

/// Adds a row of terms into a row ([`Rows`]).
type RowAdd<'a, T> = dyn Fn(&mut [T], &[T]) + Sync + 'a;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reference::backward_by_scatter;
    use crate::{Mode, PadRequest};

    fn plan(dtype: DataType, shape: &[usize], pads: &[i64], mode: Mode) -> PadPlan {
        PadPlan::new(dtype, shape, &PadRequest::new(pads.to_vec()).mode(mode)).unwrap()
    }

    /// Against the independent adjoint (each output position's gradient added into the input
    /// element it read: reference.rs), on gradients of small integers, whose sums are exact
    /// in any order: every mode, crops, pads of many periods, axes of one element, rank 1-4.
    #[test]
    fn the_adjoint_matches_the_scatter_on_exact_sums() {
        let mut next = crate::draws(0x2545_f491_4f6c_dd1du64);
        let mut ran = 0;
        for _ in 0..3000 {
            let rank = 1 + next(4) as usize;
            let shape: Vec<usize> = (0..rank).map(|_| 1 + next(5) as usize).collect();
            let pads: Vec<i64> =
                (0..2 * rank).map(|_| next(9) as i64 - 2 + if next(8) == 0 { 20 } else { 0 }).collect();
            let mode = Mode::ALL[next(5) as usize];
            let Ok(p) = PadPlan::new(DataType::Float32, &shape, &PadRequest::new(pads.clone()).mode(mode)) else {
                continue;
            };
            let g: Vec<f32> = (0..p.out_len()).map(|_| next(17) as f32 - 8.0).collect();
            let grad = Tensor::from_slice(DataType::Float32, p.out_shape().to_vec(), &g).unwrap();
            let got = pad_backward(&p, &grad).unwrap();
            let want = backward_by_scatter(&p, &grad);
            assert_eq!(got.as_slice::<f32>(), want.as_slice::<f32>(), "{shape:?} {pads:?} {mode}");
            ran += 1;
        }
        assert!(ran > 1500, "{ran}");
    }

    /// grad_in is written whole without being zero-filled first (Miri, in .ci/miri, reports a
    /// byte read before it is written): every mode, crops, merged identity axes inside and
    /// outside, an untouched plan, complex and both 16-bit types' values, strips of one index (long ones
    /// with rows in lanes), and under Miri (from 4 KiB) outputs split among threads; against
    /// the scatter on exact sums.
    #[test]
    fn gradients_are_written_whole() {
        let mut next = crate::draws(0x9e37_79b9_7f4a_7c15u64);
        let cases: [(DataType, &[usize], &[i64]); 8] = [
            (DataType::Float32, &[3, 5], &[1, 2, -1, 3]),
            (DataType::Float32, &[10, 3], &[1, 0, 16, 0]),
            (DataType::Float32, &[2, 3, 4, 2], &[0, 2, 0, 0, 0, 1, 0, 0]),
            (DataType::Float32, &[2, 3], &[0, 0, 0, 0]),
            (DataType::Complex64, &[4, 3], &[2, 0, 1, 2]),
            (DataType::Float16, &[3, 9], &[0, 1, 4, 2]),
            (DataType::Bfloat16, &[3, 9], &[0, 1, 4, 2]),
            (DataType::Float32, &[2, 520], &[0, 0, 2, 3]),
        ];
        for mode in Mode::ALL {
            for &(dtype, shape, pads) in &cases {
                let Ok(p) = PadPlan::new(dtype, shape, &PadRequest::new(pads.to_vec()).mode(mode)) else { continue };
                let parts = if dtype == DataType::Complex64 { 2 } else { 1 };
                let g: Vec<f32> = (0..p.out_len() * parts).map(|_| next(17) as f32 - 8.0).collect();
                let bytes = match dtype {
                    DataType::Float16 => g.iter().flat_map(|&x| f16::from_f32(x).to_le_bytes()).collect(),
                    DataType::Bfloat16 => g.iter().flat_map(|&x| bf16::from_f32(x).to_le_bytes()).collect(),
                    _ => bytemuck::cast_slice(&g).to_vec(),
                };
                let grad = Tensor::from_bytes(dtype, p.out_shape().to_vec(), bytes).unwrap();
                let got = pad_backward(&p, &grad).unwrap();
                assert_eq!(got, backward_by_scatter(&p, &grad), "{dtype} {shape:?} {pads:?} {mode}");
            }
        }
    }

    /// The other types: f64, f16, bf16 and complex, against the scatter on exact sums.
    #[test]
    fn every_float_type_sums_in_its_own_precision() {
        let p = plan(DataType::Float32, &[3, 4], &[2, -1, 5, 3], Mode::Reflect);
        for dtype in
            [DataType::Float64, DataType::Float16, DataType::Bfloat16, DataType::Complex64, DataType::Complex128]
        {
            let q = PadPlan::new(dtype, &[3, 4], &PadRequest::new(vec![2, -1, 5, 3]).mode(Mode::Reflect)).unwrap();
            let n = q.out_len() * if matches!(dtype, DataType::Complex64 | DataType::Complex128) { 2 } else { 1 };
            let values: Vec<f64> = (0..n).map(|i| (i % 7) as f64 - 3.0).collect();
            let bytes: Vec<u8> = match dtype {
                DataType::Float64 | DataType::Complex128 => bytemuck::cast_slice(&values).to_vec(),
                DataType::Complex64 => values.iter().flat_map(|&v| (v as f32).to_le_bytes()).collect(),
                DataType::Float16 => values.iter().flat_map(|&v| f16::from_f64(v).to_le_bytes()).collect(),
                _ => values.iter().flat_map(|&v| bf16::from_f64(v).to_le_bytes()).collect(),
            };
            let grad = Tensor::from_bytes(dtype, q.out_shape().to_vec(), bytes).unwrap();
            let got = pad_backward(&q, &grad).unwrap();
            assert_eq!(got.bytes(), backward_by_scatter(&q, &grad).bytes(), "{dtype}");
            assert_eq!(got.shape(), p.in_shape());
        }
    }

    /// float16 and bfloat16 sums are rounded to the type at every addition, to nearest with
    /// ties to even (as numpy adds float16 arrays), against bits worked by hand: neither
    /// truncated nor summed in f32 and rounded once. [1] edge-padded by 2 before sums
    /// ((+0 + g0) + g1) + g2 (the pad's images first, the kept one last).
    #[test]
    fn half_precision_sums_round_to_nearest_even_at_every_addition() {
        let sum = |dtype: DataType, g: [f32; 3]| -> u16 {
            let p = plan(dtype, &[1], &[2, 0], Mode::Edge);
            let bits: Vec<u16> = match dtype {
                DataType::Float16 => g.iter().map(|&v| f16::from_f32(v).to_bits()).collect(),
                _ => g.iter().map(|&v| bf16::from_f32(v).to_bits()).collect(),
            };
            let grad = Tensor::from_slice(dtype, vec![3], &bits).unwrap();
            pad_backward(&p, &grad).unwrap().as_slice::<u16>().unwrap()[0]
        };
        // float16: 1 is 0x3c00, its ulp 2^-10.
        let (ulp, one) = (2f32.powi(-10), 1.0f32);
        // 1 + 3/4 ulp rounds up to 0x3c01 (truncation: 0x3c00).
        assert_eq!(sum(DataType::Float16, [0.0, 0.75 * ulp, one]), 0x3c01);
        // 1 + ulp + 1/2 ulp: a tie, to the even 0x3c02 (truncation: 0x3c01).
        assert_eq!(sum(DataType::Float16, [ulp, 0.5 * ulp, one]), 0x3c02);
        // (1 + 1/2 ulp) + 1/2 ulp: each a tie to the even 1.0 (once in f32: 0x3c01).
        assert_eq!(sum(DataType::Float16, [one, 0.5 * ulp, 0.5 * ulp]), 0x3c00);
        // bfloat16: 1 is 0x3f80, its ulp 2^-7; the same three sums.
        let ulp = 2f32.powi(-7);
        assert_eq!(sum(DataType::Bfloat16, [0.0, 0.75 * ulp, one]), 0x3f81);
        assert_eq!(sum(DataType::Bfloat16, [ulp, 0.5 * ulp, one]), 0x3f82);
        assert_eq!(sum(DataType::Bfloat16, [one, 0.5 * ulp, 0.5 * ulp]), 0x3f80);
    }

    /// The float8s (but float8e8m0) against the scatter on exact sums: gradients of -1, 0
    /// and 1 on random plans where no input element is read more than 7 times, so that every
    /// partial sum is a small integer each type holds. Their rounding is float8.rs's tests'.
    #[test]
    fn the_float8s_match_the_scatter_on_exact_sums() {
        let mut next = crate::draws(0x9e37_79b9_7f4a_7c15u64);
        let types = [DataType::Float8e4m3fn, DataType::Float8e4m3fnuz, DataType::Float8e5m2, DataType::Float8e5m2fnuz];
        let mut ran = [0; 4];
        for _ in 0..2000 {
            let rank = 1 + next(3) as usize;
            let shape: Vec<usize> = (0..rank).map(|_| 1 + next(5) as usize).collect();
            let pads: Vec<i64> = (0..2 * rank).map(|_| next(7) as i64 - 2).collect();
            let mode = Mode::ALL[next(5) as usize];
            let request = PadRequest::new(pads.clone()).mode(mode);
            let Ok(counting) = PadPlan::new(DataType::Float64, &shape, &request) else { continue };
            let ones =
                Tensor::from_slice(DataType::Float64, counting.out_shape().to_vec(), &vec![1f64; counting.out_len()]);
            let reads = backward_by_scatter(&counting, &ones.unwrap());
            if reads.as_slice::<f64>().unwrap().iter().any(|&n| n > 7.0) {
                continue;
            }
            let t = next(4) as usize;
            let p = PadPlan::new(types[t], &shape, &request).unwrap();
            // ±1: the pattern of 1 by the type's own values, and its sign bit.
            let one = (0..=0x7fu8).find(|&b| crate::constant::small_float_value(types[t], b) == Some(1.0)).unwrap();
            let g: Vec<u8> = (0..p.out_len()).map(|_| [0, one, one | 0x80][next(3) as usize]).collect();
            let grad = Tensor::from_bytes(types[t], p.out_shape().to_vec(), g).unwrap();
            let got = pad_backward(&p, &grad).unwrap();
            assert_eq!(got.bytes(), backward_by_scatter(&p, &grad).bytes(), "{} {shape:?} {pads:?} {mode}", types[t]);
            ran[t] += 1;
        }
        assert!(ran.iter().all(|&n| n > 100), "{ran:?}");
    }

    /// A float8 sum is rounded at every addition, in the fixed order: [1] wrapped by 3 before
    /// sums 16, 1, 1 (the pads) then 1 (the kept one); in float8e4m3fn 16 + 1 is a tie that
    /// stays at 16, so the sum is 16 where the exact 19 would round to 20.
    #[test]
    fn a_float8_sum_is_rounded_at_every_addition() {
        let p = plan(DataType::Float8e4m3fn, &[1], &[3, 0], Mode::Wrap);
        let (sixteen, one) = (0x58, 0x38); // 1.000b x 2^4 and 1.000b x 2^0, bias 7
        let grad = Tensor::from_bytes(DataType::Float8e4m3fn, vec![4], vec![sixteen, one, one, one]).unwrap();
        assert_eq!(pad_backward(&p, &grad).unwrap().bytes().unwrap(), &[sixteen]);
    }

    /// float8e8m0 has no zero to start a sum from, 4-bit types no gradient: refused by name.
    #[test]
    fn float8e8m0_and_4_bit_types_are_refused() {
        for dtype in [DataType::Float8e8m0, DataType::Float4e2m1, DataType::Int4] {
            let p = plan(dtype, &[3], &[1, 1], Mode::Edge);
            let e = pad_backward(&p, &Tensor::zeros(dtype, vec![5]).unwrap()).unwrap_err();
            assert!(matches!(e, PadError::Unsupported { .. }), "{dtype}: {e}");
            assert!(!has_gradient(dtype), "{dtype}");
        }
        assert!(has_gradient(DataType::Float8e5m2fnuz));
    }

    /// Rounding shows the order: in f32, 1 + 2^-24 + 2^-24 depends on which two add first.
    /// The kept position's gradient comes last, after both pads' (Burn's own order), so the
    /// two small pad gradients of a reflected element meet first.
    #[test]
    fn the_pads_gradients_are_added_before_the_kept_ones() {
        let p = plan(DataType::Float32, &[3], &[1, 1], Mode::Reflect); // 2 | 1 2 3 | 2
        let tiny = 1.0 / (1u32 << 24) as f32;
        let grad = Tensor::from_slice(DataType::Float32, vec![5], &[tiny, 0.0, 1.0, 0.0, tiny]).unwrap();
        let got = pad_backward(&p, &grad).unwrap();
        // Element 1 (the 2): (0 + tiny) + tiny, then + 1: 1 + 2^-23, where 1 first would lose both.
        assert_eq!(got.as_slice::<f32>().unwrap()[1], 1.0 + 2.0 * tiny);
        assert_ne!((1.0f32 + tiny) + tiny, 1.0 + 2.0 * tiny, "the order must show");
    }

    /// A 16-bit sum's first term written in bits is the addition into zeros it stands for,
    /// on every bit pattern of both types (signalling and quiet NaNs, -0.0, subnormals).
    #[test]
    fn a_16_bit_sums_first_term_is_its_addition_to_zero() {
        let all: Vec<u16> = (0..=u16::MAX).collect();
        let mut got = vec![0xffffu16; all.len()];
        let halves: &[f16] = bytemuck::cast_slice(&all);
        start_rows_16(bytemuck::cast_slice_mut::<u16, f16>(&mut got), halves, F16_EXPONENT, F16_QUIET);
        for (&h, &g) in halves.iter().zip(&got) {
            assert_eq!(g, f16::from_f32(add_f32(0.0, h.to_f32())).to_bits(), "float16 {:#06x}", h.to_bits());
        }
        let brains: &[bf16] = bytemuck::cast_slice(&all);
        start_rows_16(bytemuck::cast_slice_mut::<u16, bf16>(&mut got), brains, BF16_EXPONENT, BF16_QUIET);
        for (&h, &g) in brains.iter().zip(&got) {
            assert_eq!(g, bf16::from_f32(add_f32(0.0, h.to_f32())).to_bits(), "bfloat16 {:#06x}", h.to_bits());
        }
    }

    /// A sum of one term is that term, bits and all (a slice of the gradient, as JAX's and
    /// PyTorch's gradients are): -0.0 through an axis left as it is, through a constant pad's
    /// kept elements and through a crop; a sum of two -0.0s, from +0.0, is +0.0.
    #[test]
    fn a_sum_of_one_term_is_that_term_bits_and_all() {
        let grad = Tensor::from_slice(DataType::Float32, vec![2, 2], &[-0.0f32, 1.0, -0.0, 2.0]).unwrap();
        let got = pad_backward(&plan(DataType::Float32, &[2, 2], &[0, 0, 0, 0], Mode::Edge), &grad).unwrap();
        assert_eq!(got.as_slice::<u32>().unwrap(), grad.as_slice::<u32>().unwrap());
        // Constant (1 before on axis 0): rows 1 and 2 of grad_out, each one term.
        let p = plan(DataType::Float32, &[2, 2], &[1, 0, 0, 0], Mode::Constant);
        let grad = Tensor::from_slice(DataType::Float32, vec![3, 2], &[5.0f32, 5.0, -0.0, 1.0, 2.0, -0.0]).unwrap();
        let got = pad_backward(&p, &grad).unwrap();
        assert_eq!(got.as_slice::<u32>().unwrap(), [0x8000_0000, 1f32.to_bits(), 2f32.to_bits(), 0x8000_0000]);
        // A crop of one element a side on axis 1, an edge pad of one on axis 0.
        let p = plan(DataType::Float32, &[1, 3], &[0, -1, 1, -1], Mode::Edge);
        let grad = Tensor::from_slice(DataType::Float32, vec![2, 1], &[-0.0f32, -0.0]).unwrap();
        let got = pad_backward(&p, &grad).unwrap();
        assert_eq!(got.as_slice::<u32>().unwrap(), [0, 0, 0], "two terms from +0.0; the cropped ones zero");
        let grad = Tensor::from_slice(DataType::Float32, vec![2, 1], &[1.0f32, -0.0]).unwrap();
        let p = plan(DataType::Float32, &[2, 3], &[0, -1, 0, -1], Mode::Edge);
        let got = pad_backward(&p, &grad).unwrap();
        assert_eq!(got.as_slice::<u32>().unwrap(), [0, 1f32.to_bits(), 0, 0, 0x8000_0000, 0]);
    }

    /// Rows are gathered in lanes where their strips are short (each strip's sums in every
    /// lane one sum) or a corner's chain of additions is long, and one at a time elsewhere: the
    /// lanes' sums themselves are checked by the tests against the scatter and the nest.
    #[test]
    fn short_strips_and_long_corners_are_gathered_in_lanes() {
        let lanes = |shape: &[usize], pads: &[i64], mode: Mode| {
            let p = plan(DataType::Float32, shape, pads, mode);
            let sum_one = |s: &[&[f32]], i: &[usize], o: &mut [f32]| gathered(s, i, o, 0.0, add_f32);
            Gather::new(&p, 1, 0.0, Rows::adding(&add_rows_f32), &sum_one).lanes
        };
        // A last axis padded by a few: strips of up to 8 indices in rows of 256.
        assert_eq!(lanes(&[64, 256], &[0, 0, 0, 8], Mode::Reflect), STRIP_LANES);
        assert_eq!(lanes(&[4, 256, 256], &[0, 2, 2, 0, 2, 2], Mode::Wrap), STRIP_LANES);
        assert_eq!(lanes(&[4, 256], &[0, LANES_MAX_STRIP as i64, 0, 0], Mode::Symmetric), STRIP_LANES);
        // Strips longer than that: one row at a time, the terms read where they are.
        assert_eq!(lanes(&[4, 256], &[0, LANES_MAX_STRIP as i64 + 1, 0, 0], Mode::Symmetric), 1);
        assert_eq!(lanes(&[3, 224, 224], &[0, 100, 100, 0, 100, 100], Mode::Reflect), 1);
        // One row: nothing beside it.
        assert_eq!(lanes(&[16000], &[512, 512], Mode::Reflect), 1);
        assert_eq!(lanes(&[256], &[0, 8], Mode::Reflect), 1);
        // Strips of one index only (an edge's ends, a few terms each): no row of sums.
        assert_eq!(lanes(&[64, 256], &[0, 2, 0, 2], Mode::Edge), 1);
        // No strips on the last axis (a constant pad's sums are none; an axis above padded).
        assert_eq!(lanes(&[64, 256], &[2, 0, 2, 0], Mode::Reflect), 1);
        // A corner of many terms (edge): its chain of additions interleaved.
        assert_eq!(lanes(&[64, 64], &[0, 40, 0, 40], Mode::Edge), CHAIN_LANES);
    }

    /// Long chains (an index of 16 terms or more on the innermost axis: an edge's corner) are
    /// summed many rows at once where the CPU has AVX, every row of grad_out's chains at both
    /// ends of its axis there; an edge's pad of 2 (three terms) and a single row one at a time.
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    #[test]
    fn long_chains_are_summed_many_rows_at_once() {
        let avx = std::arch::is_x86_feature_detected!("avx");
        for (shape, pads, rows) in [
            // 3 x 80 rows of grad_out, each summed at both ends: H's corners by the image
            // rows (21 rows a call), H's edges in lanes (16, 16 and 6 rows a call).
            (vec![3, 40, 40], vec![0, 20, 20, 0, 20, 20], 3 * 80 * 2),
            // The end padded by 2: its three terms one row at a time.
            (vec![3, 40, 40], vec![0, 20, 20, 0, 20, 2], 3 * 80),
            (vec![3, 40, 40], vec![0, 2, 2, 0, 2, 2], 0),
            (vec![1, 40], vec![0, 20, 0, 20], 0),
        ] {
            let p = plan(DataType::Float32, &shape, &pads, Mode::Edge);
            let values: Vec<f32> = (0..p.out_len()).map(|i| (i % 97) as f32 - 48.0).collect();
            let grad = Tensor::from_slice(DataType::Float32, p.out_shape().to_vec(), &values).unwrap();
            chains::CHAINED_ROWS.set(0);
            pad_backward(&p, &grad).unwrap();
            assert_eq!(chains::CHAINED_ROWS.get(), if avx { rows } else { 0 }, "{shape:?} {pads:?}");
        }
    }

    /// The gather against the documented nest written out element by element (each axis's
    /// [`images`], each sum [`ordered_sum`]), on gradients of every magnitude, where any
    /// other order or grouping shows in the rounding: random plans, crops, long pads whose
    /// sums run in blocks, float32 and float16 (rows past the slice conversions' stretch).
    /// An axis's images as the gather reads them (its run of one each, its strips, a kept
    /// index's own) are exactly the documented lists: every mode, lengths 1-9, crops, pads of
    /// many periods.
    #[test]
    fn an_axis_images_are_its_runs_strips_and_kept_positions() {
        let mut listed = Vec::new();
        let mut checked = 0;
        for mode in Mode::ALL {
            for n in 1..10usize {
                for (b, e) in
                    [(0i64, 0i64), (1, 0), (0, 2), (3, 4), (-1, 2), (2, -1), (11, 13), (-2, -1), (25, 0), (-3, 7)]
                {
                    let Ok(p) = PadPlan::new(DataType::Float32, &[n], &PadRequest::new(vec![b, e]).mode(mode)) else {
                        continue;
                    };
                    let map = &p.axes()[0];
                    let axis = GatherAxis::new(n, 1, 1, Some((map, mode)));
                    let mut furthest = None;
                    for k in 0..n {
                        let want = crate::adjoint::images(map, mode, k);
                        assert_eq!(axis.images_of(k, &mut listed), &want[..], "{mode} n={n} pads ({b},{e}): {k}");
                        furthest = want.iter().copied().chain(furthest).max();
                        checked += 1;
                    }
                    // Its reach (what f32_image_rows checks once a row) is one past the
                    // furthest image any index reads.
                    assert_eq!(axis.reach, furthest.map_or(0, |f| f + 1), "{mode} n={n} pads ({b},{e}): reach");
                }
            }
        }
        assert!(checked > 1000, "{checked}");
    }

    #[test]
    fn rows_of_strips_of_every_length_match_the_scatter() {
        // Rows side by side (STRIP_LANES) with strips of 1 to 33 indices: their terms and sums
        // copied four at a time and the rest, over a row's kept terms copied at once.
        let mut next = crate::draws(0x9e37_79b9_7f4a_7c15u64);
        for n in 1..=LANES_MAX_STRIP as i64 + 1 {
            for mode in Mode::ALL {
                for dtype in [DataType::Float32, DataType::Float16] {
                    let p = plan(dtype, &[3, 2, 40], &[0, 0, n, 0, 0, n / 2 + 1], mode);
                    let g: Vec<f32> = (0..p.out_len()).map(|_| next(17) as f32 - 8.0).collect();
                    let grad = match dtype {
                        DataType::Float16 => {
                            let g: Vec<f16> = g.iter().map(|&v| f16::from_f32(v)).collect();
                            Tensor::from_slice(dtype, p.out_shape().to_vec(), &g).unwrap()
                        }
                        _ => Tensor::from_slice(dtype, p.out_shape().to_vec(), &g).unwrap(),
                    };
                    assert_eq!(pad_backward(&p, &grad).unwrap(), backward_by_scatter(&p, &grad), "{n} {mode} {dtype}");
                }
            }
        }
    }

    /// Whole rows (a row's copy and its strips in one call) where the type has them and every
    /// strip of the innermost axis is one its strip sums take, the axis uncropped: the rows'
    /// count each plan writes so (the outputs are the other ways' either way, tests above).
    #[test]
    fn whole_rows_where_every_strip_is_the_types() {
        let (f16c, avx2) = (f16_rows().whole_rows.is_some(), bf16_rows().whole_rows.is_some());
        let sse2 = cfg!(all(target_arch = "x86_64", not(miri)));
        let cases: [(DataType, &[i64], Mode, usize); 12] = [
            // Six rows of 40, strips of 8 (f16 takes 2 and more, f32 8 and more).
            (DataType::Float16, &[0, 0, 0, 0, 0, 8], Mode::Reflect, if f16c { 6 } else { 0 }),
            (DataType::Float16, &[0, 0, 2, 0, 0, 3], Mode::Wrap, if f16c { 6 } else { 0 }),
            (DataType::Float32, &[0, 0, 8, 0, 0, 8], Mode::Symmetric, if sse2 { 6 } else { 0 }),
            // A touched axis above: its three rows of one image whole, the three of two images
            // float32's image rows.
            (DataType::Float32, &[0, 1, 8, 0, 0, 8], Mode::Reflect, if sse2 { 3 } else { 0 }),
            // Strips of one index and a few: the sums take them (an edge's of a few terms too).
            (DataType::Float16, &[0, 0, 1, 0, 0, 1], Mode::Reflect, if f16c { 6 } else { 0 }),
            (DataType::Float16, &[0, 0, 2, 0, 0, 2], Mode::Edge, if f16c { 6 } else { 0 }),
            (DataType::Float32, &[0, 0, 2, 0, 0, 8], Mode::Reflect, if sse2 { 6 } else { 0 }),
            (DataType::Bfloat16, &[0, 0, 1, 0, 0, 8], Mode::Reflect, if avx2 { 6 } else { 0 }),
            // An edge's long chains (its rows summed side by side), a cropped axis, a type
            // with no strip sums.
            (DataType::Float16, &[0, 0, 20, 0, 0, 2], Mode::Edge, 0),
            (DataType::Float32, &[0, 0, 2, 0, 0, 16], Mode::Edge, 0),
            (DataType::Float16, &[0, 0, -1, 0, 0, 8], Mode::Reflect, 0),
            (DataType::Float64, &[0, 0, 0, 0, 0, 8], Mode::Reflect, 0),
        ];
        for (dtype, pads, mode, rows) in cases {
            let p = plan(dtype, &[3, 2, 40], pads, mode);
            let grad = Tensor::zeros(dtype, p.out_shape().to_vec()).unwrap();
            WHOLE_ROWS.set(0);
            pad_backward(&p, &grad).unwrap();
            assert_eq!(WHOLE_ROWS.get(), rows, "{dtype} {pads:?} {mode}");
        }
    }

    /// A type's strip sums take strips of any length up to a block of terms, but one index's
    /// chain of [`LANES_MIN_TERMS`] terms or more (the chains' lanes sum those).
    #[test]
    fn strip_sums_take_all_but_long_chains_and_past_a_block() {
        for (n, terms, takes) in [
            (1, 1, true),
            (1, 3, true),
            (1, LANES_MIN_TERMS - 1, true),
            (1, LANES_MIN_TERMS, false),
            (1, 101, false),
            (2, LANES_MIN_TERMS, true),
            (7, 200, true),
            (8, BLOCK, true),
            (2, BLOCK + 1, false),
            (1, BLOCK + 1, false),
        ] {
            assert_eq!(strip_sum_takes(n, terms), takes, "{n} indices of {terms} terms");
        }
    }

    /// Where the CPU has F16C, float16's gradient takes its strips eight at a time (the
    /// outputs are the rows' path's either way: this is the wiring).
    #[test]
    fn float16_strips_take_f16c_where_the_cpu_has_it() {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("f16c") && std::arch::is_x86_feature_detected!("ssse3") {
            assert!(f16_rows().strip.is_some() && f16_rows().whole_rows.is_some());
            return;
        }
        assert!(f16_rows().strip.is_none() && f16_rows().whole_rows.is_none());
    }

    /// Where the CPU has AVX2, bfloat16's gradient takes its strips eight at a time (the
    /// wiring, as float16's).
    #[test]
    fn bfloat16_strips_take_avx2_where_the_cpu_has_it() {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2")
            && std::arch::is_x86_feature_detected!("sse4.1")
            && std::arch::is_x86_feature_detected!("ssse3")
        {
            assert!(bf16_rows().strip.is_some() && bf16_rows().whole_rows.is_some());
            return;
        }
        assert!(bf16_rows().strip.is_none() && bf16_rows().whole_rows.is_none());
    }

    #[test]
    fn sixteen_bit_strips_round_every_addition_and_keep_the_first_nan() {
        // Strips of 38 indices and three terms each (reflect by 39 on both sides of 40), and
        // of 1 to 33 indices and two terms: eight indices at a time where the CPU has the
        // type's conversions (the last few padded to eight), the eights holding a NaN one at a
        // time. Terms where rounding at every addition decides the bits (float16's 2048 + 1 + 1
        // is 2048 so, 2050 rounded once; bfloat16's 256 + 1 + 1 256, not 258), sums past the
        // largest finite value, infinities, -0.0, subnormals and NaNs of both signs, quiet and
        // signalling, with payloads.
        type Sum16 = fn(&[u16]) -> u16;
        let f16_sum: Sum16 = |terms| {
            let values = terms.iter().map(|&b| f16::from_bits(b));
            crate::adjoint::ordered_sum(values, terms.len(), f16::ZERO, add_f16).to_bits()
        };
        let bf16_sum: Sum16 = |terms| {
            let values = terms.iter().map(|&b| bf16::from_bits(b));
            crate::adjoint::ordered_sum(values, terms.len(), bf16::ZERO, add_bf16).to_bits()
        };
        let types: [(DataType, [u16; 12], Sum16); 2] = [
            (
                DataType::Float16,
                [0x6800, 0x3c00, 0xbc00, 0x3800, 0x4200, 0x63d0, 0x8000, 0x7c00, 0xfc00, 0x7c01, 0xfe55, 0x0001],
                f16_sum,
            ),
            (
                DataType::Bfloat16,
                [0x4380, 0x3f80, 0xbf80, 0x3f00, 0x4040, 0x7f7f, 0x8000, 0x0001, 0x7f80, 0xff80, 0x7f81, 0xffd5],
                bf16_sum,
            ),
        ];
        let mut next = crate::draws(0x5851_f42d_4c95_7f2du64);
        let mut cases = vec![(vec![0, 0, 39, 0, 0, 39], Mode::Reflect)];
        for n in 1..=LANES_MAX_STRIP as i64 + 1 {
            cases.push((vec![0, 0, n, 0, 0, n / 2 + 1], Mode::Symmetric));
        }
        for (dtype, palette, sum) in types {
            for (pads, mode) in &cases {
                let p = plan(dtype, &[3, 2, 40], pads, *mode);
                let axis = &p.axes()[2];
                for nans in [false, true] {
                    let g: Vec<u16> =
                        (0..p.out_len()).map(|_| palette[next(if nans { 12 } else { 8 }) as usize]).collect();
                    let grad =
                        Tensor::from_bytes(dtype, p.out_shape().to_vec(), bytemuck::cast_slice(&g).to_vec()).unwrap();
                    // Each row's sums in the documented order, rounded at every addition.
                    let want: Vec<u16> = (0..6)
                        .flat_map(|row| (0..40).map(move |k| (row, k)))
                        .map(|(row, k)| {
                            let terms = crate::adjoint::images(axis, *mode, k);
                            sum(&terms.iter().map(|&o| g[row * axis.out_len + o]).collect::<Vec<_>>())
                        })
                        .collect();
                    let got = pad_backward(&p, &grad).unwrap();
                    assert_eq!(got.as_slice::<u16>().unwrap(), &want[..], "{dtype} {pads:?} {mode} nans {nans}");
                }
            }
        }
    }

    /// float32's strips take SSE2's eights where the target is x86-64 (not under Miri).
    #[test]
    fn float32_strips_take_sse2_on_x86_64() {
        assert_eq!(f32_rows().strip.is_some(), cfg!(all(target_arch = "x86_64", not(miri))));
    }

    /// float32 terms for sums whose bits show their order and the NaN rule: the first seven
    /// finite (1e8 + 1 - 1e8 depends on the order), then infinities of both signs (their sum
    /// a NaN made), NaNs of both signs, quiet and signalling, with payloads, and a subnormal.
    const F32_PALETTE: [u32; 12] = [
        0x4cbe_bc20, // 1e8
        0x3f80_0000, // 1
        0xccbe_bc20, // -1e8
        0x3f00_0000, // 0.5
        0x8000_0000, // -0.0
        0x4040_0000, // 3
        0xbe80_0000, // -0.25
        0x7f80_0000,
        0xff80_0000,
        0x7f80_0001,
        0xffc0_0055,
        0x0000_0001,
    ];

    #[test]
    fn float32_strips_are_their_ordered_sums() {
        // Strips of 119 indices and two terms (one lane: reflect by 120 of 240), of 38 and
        // three terms, and of 1 to 33 indices and two (rows side by side), eight at a time
        // where the target has SSE2, the rest and eights holding a NaN one at a time. Terms
        // whose order decides the bits (1e8 + 1 - 1e8), infinities of both signs (their sum a
        // NaN made), -0.0 and NaNs of both signs, quiet and signalling, with payloads.
        let mut next = crate::draws(0x2545_f491_4f6c_dd1du64);
        let mut cases = vec![(vec![2, 240], vec![0, 120, 0, 120], Mode::Reflect)];
        cases.push((vec![3, 2, 40], vec![0, 0, 39, 0, 0, 39], Mode::Reflect));
        for n in 1..=LANES_MAX_STRIP as i64 + 1 {
            cases.push((vec![3, 2, 40], vec![0, 0, n, 0, 0, n / 2 + 1], Mode::Symmetric));
        }
        for (shape, pads, mode) in cases {
            let p = plan(DataType::Float32, &shape, &pads, mode);
            let axis = p.axes().last().unwrap();
            let (rows, len) = (p.in_len() / axis.in_len, axis.in_len);
            for specials in [7, 12] {
                let g: Vec<f32> =
                    (0..p.out_len()).map(|_| F32_PALETTE[next(specials) as usize]).map(f32::from_bits).collect();
                let grad = Tensor::from_slice(DataType::Float32, p.out_shape().to_vec(), &g).unwrap();
                let want: Vec<u32> = (0..rows)
                    .flat_map(|row| (0..len).map(move |k| (row, k)))
                    .map(|(row, k)| {
                        let terms = crate::adjoint::images(axis, mode, k);
                        let values = terms.iter().map(|&o| g[row * axis.out_len + o]);
                        crate::adjoint::ordered_sum(values, terms.len(), 0.0, add_f32).to_bits()
                    })
                    .collect();
                let got = pad_backward(&p, &grad).unwrap();
                assert_eq!(got.as_slice::<u32>().unwrap(), &want[..], "{shape:?} {pads:?} {mode} {specials}");
            }
        }
    }

    /// `lists[d][k]`: axis d's images of index k (with its length in grad_out).
    type Lists = [(usize, Vec<Vec<usize>>)];

    /// The documented nest's sum for grad_in's index `k`: over axis `d`'s images in order,
    /// each the nest of the axes inside ([`crate::adjoint::ordered_sum`] at every level).
    fn nest<T: Copy>(lists: &Lists, g: &[T], d: usize, at: usize, k: &[usize], zero: T, add: &dyn Fn(T, T) -> T) -> T {
        let Some((out_len, list)) = lists.get(d) else { return g[at] };
        let list = &list[k[d]];
        let terms = list.iter().map(|&o| nest(lists, g, d + 1, at * out_len + o, k, zero, add));
        crate::adjoint::ordered_sum(terms, list.len(), zero, add)
    }

    /// Flat index `i` of `shape` as its indices `k`.
    fn unravel(mut i: usize, shape: &[usize], k: &mut [usize]) {
        for (k, &n) in k.iter_mut().zip(shape).rev() {
            (*k, i) = (i % n, i / n);
        }
    }

    /// Every axis's images of every index (the [`Lists`] [`nest`] takes).
    fn lists_of(p: &PadPlan) -> Vec<(usize, Vec<Vec<usize>>)> {
        let image = |a: &crate::plan::AxisMap, k| crate::adjoint::images(a, p.mode(), k);
        p.axes().iter().map(|a| (a.out_len, (0..a.in_len).map(|k| image(a, k)).collect())).collect()
    }

    #[test]
    fn the_gather_is_the_documented_nest() {
        use crate::adjoint::BLOCK;
        let mut next = crate::draws(0x5851_f42d_4c95_7f2du64);
        let (mut ran, mut blocks) = (0, 0);
        // First, rows gathered in lanes: long strips of one index on the innermost axis (in
        // blocks, and not) under outer indices of many images and runs of one, each mode and
        // type.
        let lanes: [(&[usize], &[i64]); 2] = [(&[12, 5], &[9, 3, 300, 20]), (&[2, 10, 6], &[0, 1, 0, 0, 17, 260])];
        let fixed: Vec<_> = lanes.iter().flat_map(|&c| Mode::ALL.map(|m| (c, m))).flat_map(|c| [c, c]).collect();
        for i in 0..fixed.len() + 400 {
            let (shape, pads, mode) = match fixed.get(i) {
                Some(&((shape, pads), mode)) => (shape.to_vec(), pads.to_vec(), mode),
                None => {
                    let rank = 1 + next(3) as usize;
                    let long = next(4) == 0;
                    let shape: Vec<usize> =
                        (0..rank).map(|d| 1 + next(if d + 1 == rank && !long { 300 } else { 5 }) as usize).collect();
                    // A long pad on one side of one axis: sums past a block.
                    let far = if long { next(2 * rank as u64) as usize } else { usize::MAX };
                    let pads: Vec<i64> = (0..2 * rank)
                        .map(|i| next(7) as i64 - 2 + if i == far { 300 + next(400) as i64 } else { 0 })
                        .collect();
                    (shape, pads, Mode::ALL[next(5) as usize])
                }
            };
            let rank = shape.len();
            let dtype = if i % 2 == 0 { DataType::Float32 } else { DataType::Float16 };
            let Ok(p) = PadPlan::new(dtype, &shape, &PadRequest::new(pads.clone()).mode(mode)) else { continue };
            // float16's kept finite in sums of hundreds of terms (its largest is 65504), each
            // well below the sums' units in the last place so that the order shows.
            let (range, scales) = if dtype == DataType::Float32 { (1000, 24) } else { (100, 8) };
            let values: Vec<f32> = (0..p.out_len())
                .map(|_| {
                    (next(2 * range + 1) as f32 - range as f32) * 2f32.powi(next(scales) as i32 - scales as i32 / 2)
                })
                .collect();
            let got = |grad: &Tensor| pad_backward(&p, grad).unwrap();
            let lists = lists_of(&p);
            let mut k = vec![0; rank];
            let want: Vec<u8> = match dtype {
                DataType::Float32 => {
                    let grad = Tensor::from_slice(dtype, p.out_shape().to_vec(), &values).unwrap();
                    let out = (0..p.in_len()).flat_map(|i| {
                        unravel(i, p.in_shape(), &mut k);
                        nest(&lists, &values, 0, 0, &k, 0.0, &add_f32).to_le_bytes()
                    });
                    let want: Vec<u8> = out.collect();
                    assert_eq!(got(&grad).bytes().unwrap(), &want[..], "{dtype} {shape:?} {pads:?} {mode}");
                    want
                }
                _ => {
                    let h: Vec<f16> = values.iter().map(|&v| f16::from_f32(v)).collect();
                    let grad = Tensor::from_slice(dtype, p.out_shape().to_vec(), &h).unwrap();
                    let out = (0..p.in_len()).flat_map(|i| {
                        unravel(i, p.in_shape(), &mut k);
                        nest(&lists, &h, 0, 0, &k, f16::ZERO, &add_f16).to_le_bytes()
                    });
                    let want: Vec<u8> = out.collect();
                    assert_eq!(got(&grad).bytes().unwrap(), &want[..], "{dtype} {shape:?} {pads:?} {mode}");
                    want
                }
            };
            assert_eq!(want.len(), p.in_len() * dtype.width().bytes().unwrap());
            blocks += usize::from(lists.iter().any(|(_, l)| l.iter().any(|l| l.len() > BLOCK)));
            ran += 1;
        }
        assert!(ran > 300 && blocks > 20, "{ran} plans, {blocks} with sums in blocks");
    }

    /// float32 rows whose index above the innermost axis has several images, summed in
    /// registers (where the target has SSE2): the documented nest's bits for each, NaNs of
    /// both signs with payloads, infinities, -0.0 and sums whose order shows among the
    /// terms; runs of every length around the eights (under eight: one at a time); cropped
    /// indices; edges' corners (long strips an index at a time); past a block of images,
    /// declined (staged).
    #[test]
    fn float32_rows_of_several_images_are_their_nests() {
        let mut next = crate::draws(0x9e37_79b9_7f4a_7c15u64);
        // Reflections of one and two images on both axes, a crop, pads past the axis (three
        // and more images), an edge's corner of eleven (declined), then random plans.
        // The rows summed so where the target has SSE2, where known: 2 x 24 rows of two
        // images; an edge's two corners of eleven (on H, and on W: its long strips an index
        // at a time); none where the only index of several has 301 (past a block: staged).
        type Case = (Vec<usize>, Vec<i64>, Mode, Option<usize>);
        let mut cases: Vec<Case> = vec![
            (vec![2, 30, 37], vec![0, 12, 9, 0, 12, 17], Mode::Reflect, Some(48)),
            (vec![30, 37], vec![12, -3, 12, 17], Mode::Symmetric, None),
            (vec![5, 21], vec![9, 30, 7, 30], Mode::Wrap, None),
            (vec![4, 19], vec![10, 1, 10, 1], Mode::Edge, Some(2)),
            (vec![4, 19], vec![1, 10, 1, 10], Mode::Edge, Some(2)),
            (vec![3, 8], vec![300, 1, 0, 1], Mode::Edge, Some(0)),
            (vec![3, 16], vec![2, 20, 2, 30], Mode::Reflect, None),
        ];
        for _ in 0..60 {
            let shape = vec![1 + next(3) as usize, 2 + next(12) as usize, 1 + next(40) as usize];
            let pads = (0..6).map(|i| if i % 3 == 0 { 0 } else { next(24) as i64 - 4 }).collect();
            cases.push((shape, pads, Mode::ALL[next(5) as usize], None));
        }
        let sse2 = cfg!(all(target_arch = "x86_64", not(miri)));
        let mut summed = 0;
        for (shape, pads, mode, rows) in cases {
            let Ok(p) = PadPlan::new(DataType::Float32, &shape, &PadRequest::new(pads.clone()).mode(mode)) else {
                continue;
            };
            let lists = lists_of(&p);
            let mut k = vec![0; shape.len()];
            for specials in [7, 12] {
                let g: Vec<f32> =
                    (0..p.out_len()).map(|_| F32_PALETTE[next(specials) as usize]).map(f32::from_bits).collect();
                let grad = Tensor::from_slice(DataType::Float32, p.out_shape().to_vec(), &g).unwrap();
                let want: Vec<u32> = (0..p.in_len())
                    .map(|i| {
                        unravel(i, p.in_shape(), &mut k);
                        nest(&lists, &g, 0, 0, &k, 0.0, &add_f32).to_bits()
                    })
                    .collect();
                IMAGE_ROWS_SUMMED.set(0);
                let got = pad_backward(&p, &grad).unwrap();
                assert_eq!(got.as_slice::<u32>().unwrap(), &want[..], "{shape:?} {pads:?} {mode} {specials}");
                summed += usize::from(IMAGE_ROWS_SUMMED.get() > 0);
                if let Some(rows) = rows {
                    assert_eq!(IMAGE_ROWS_SUMMED.get(), if sse2 { rows } else { 0 }, "{shape:?} {pads:?} {mode}");
                }
            }
        }
        assert_eq!(summed > 60, sse2, "{summed} gradients summed rows in registers");
    }

    /// Each axis's run of one-term indices copied at once: the longest, its first image.
    #[test]
    fn an_axis_copies_its_longest_run_of_one_term_indices() {
        let run = |shape: &[usize], pads: &[i64], mode: Mode| {
            let p = plan(DataType::Float32, shape, pads, mode);
            let a = &p.axes()[0];
            let axis = GatherAxis::new(a.in_len, 1, 1, Some((a, mode)));
            (axis.copy, axis.copy_from)
        };
        assert_eq!(run(&[5], &[2, 3], Mode::Constant), (0..5, 2));
        assert_eq!(run(&[6], &[1, 1], Mode::Edge), (1..5, 2));
        assert_eq!(run(&[7], &[-1, 1], Mode::Edge), (1..6, 0), "cropped before, the last index summed");
        assert_eq!(run(&[8], &[0, 1], Mode::Reflect), (0..6, 0), "index 6 summed (its own and the pad's)");
        assert_eq!(run(&[6], &[2, 1], Mode::Reflect), (0..1, 2), "0 | 1 2 summed | 3 | 4 summed | 5");
    }

    /// A large grad_in is shared among threads by its outermost axis: the same bits as on one.
    #[test]
    fn a_large_gradient_is_shared_among_threads_with_the_same_bits() {
        use crate::adjoint::ordered_sum;
        use crate::threads::{PARTS_SHARED, THREADS_HERE};
        let p = plan(DataType::Float32, &[66, 130, 124], &[1, 0, 2, -2, 2, 0], Mode::Reflect);
        assert!(p.in_len() * 4 >= crate::threads::PARALLEL_MIN_BYTES);
        let mut next = crate::draws(0x1234_5678_9abc_def1u64);
        let g: Vec<f32> =
            (0..p.out_len()).map(|_| (next(2001) as f32 - 1000.0) * 2f32.powi(next(30) as i32 - 15)).collect();
        let grad = Tensor::from_slice(DataType::Float32, p.out_shape().to_vec(), &g).unwrap();
        let on = |p: &PadPlan, grad: &Tensor, threads: usize| {
            THREADS_HERE.set(Some(threads));
            PARTS_SHARED.set(0);
            let got = pad_backward(p, grad).unwrap();
            let parts = PARTS_SHARED.get();
            THREADS_HERE.set(None);
            (got, parts)
        };
        let ((one, parts_one), (four, parts_four)) = (on(&p, &grad, 1), on(&p, &grad, 4));
        assert_eq!((parts_one, parts_four), (0, 4));
        assert_eq!(one.bytes(), four.bytes());
        // One axis wrapped by its length a side and more (two to four images an index) or
        // reflected by a half and a third of it (one or two, read backwards): strips of
        // sums, each thread's part starting inside one; against the documented nest.
        let n = crate::threads::PARALLEL_MIN_BYTES / 4 + 3;
        for (pads, mode) in [([n as i64 - 1, n as i64 + 5], Mode::Wrap), ([n as i64 / 2, n as i64 / 3], Mode::Reflect)]
        {
            let p = plan(DataType::Float32, &[n], &pads, mode);
            let g: Vec<f32> =
                (0..p.out_len()).map(|_| (next(2001) as f32 - 1000.0) * 2f32.powi(next(30) as i32 - 15)).collect();
            let grad = Tensor::from_slice(DataType::Float32, p.out_shape().to_vec(), &g).unwrap();
            // Each index's images in the documented order: the pads' ascending, the kept last.
            let axis = p.axes()[0];
            let mut lists = vec![Vec::new(); n];
            let kept_end = axis.pad_before + axis.kept;
            for o in (0..axis.pad_before).chain(kept_end..axis.out_len).chain(axis.pad_before..kept_end) {
                if let Some(k) = axis.source(mode, o) {
                    lists[k].push(o);
                }
            }
            let sum = |k: usize| ordered_sum(lists[k].iter().map(|&o| g[o]), lists[k].len(), 0.0, add_f32);
            let want: Vec<u32> = (0..n).map(|k| sum(k).to_bits()).collect();
            let ((one, _), (four, parts_four)) = (on(&p, &grad, 1), on(&p, &grad, 4));
            assert_eq!(parts_four, 4);
            for got in [one, four] {
                let got = got.as_slice::<f32>().unwrap().iter().map(|x| x.to_bits());
                let wrong = got.zip(&want).position(|(a, &b)| a != b);
                assert_eq!(wrong, None, "{mode}: the first index off the nest");
            }
        }
    }

    /// Rows added eight at a time (SSE2 on x86-64) give [`add_f32`]'s and [`add_f64`]'s bits
    /// element by element: NaNs of either operand (signalling, payloads, both signs), NaNs
    /// the addition makes, -0.0, at every position of rows of 0 to 40 and in the tail.
    #[test]
    fn rows_add_as_their_elements_do() {
        let special32 = [0x7f80_0001u32, 0xffc0_0002, 0x7f80_0000, 0xff80_0000, 0x8000_0000, 0, 0x3f80_0000];
        let special64 = special32.map(|b| match b {
            0x7f80_0001 => 0x7ff0_0000_0000_0001u64,
            0xffc0_0002 => 0xfff8_0000_0000_0002,
            0x7f80_0000 => f64::INFINITY.to_bits(),
            0xff80_0000 => f64::NEG_INFINITY.to_bits(),
            0x8000_0000 => (-0f64).to_bits(),
            b => f64::from(f32::from_bits(b)).to_bits(),
        });
        let mut cases = 0;
        for len in 0..41usize {
            for at in 0..len.max(1) {
                for (i, j) in [(0, 2), (1, 0), (2, 3), (4, 4), (2, 1), (5, 5)] {
                    let value = |k: usize, s: usize| 1.5f32 + (k * 7 + s) as f32;
                    let mut acc32: Vec<f32> = (0..len).map(|k| value(k, 0)).collect();
                    let mut terms32: Vec<f32> = (0..len).map(|k| value(k, 3)).collect();
                    if len > 0 {
                        acc32[at] = f32::from_bits(special32[i]);
                        terms32[at] = f32::from_bits(special32[j]);
                    }
                    let want32: Vec<u32> = acc32.iter().zip(&terms32).map(|(&a, &t)| add_f32(a, t).to_bits()).collect();
                    add_rows_f32(&mut acc32, &terms32);
                    assert_eq!(acc32.iter().map(|x| x.to_bits()).collect::<Vec<_>>(), want32, "f32 len {len} at {at}");
                    let mut acc64: Vec<f64> = (0..len).map(|k| value(k, 0).into()).collect();
                    let mut terms64: Vec<f64> = (0..len).map(|k| value(k, 3).into()).collect();
                    if len > 0 {
                        acc64[at] = f64::from_bits(special64[i]);
                        terms64[at] = f64::from_bits(special64[j]);
                    }
                    let want64: Vec<u64> = acc64.iter().zip(&terms64).map(|(&a, &t)| add_f64(a, t).to_bits()).collect();
                    add_rows_f64(&mut acc64, &terms64);
                    assert_eq!(acc64.iter().map(|x| x.to_bits()).collect::<Vec<_>>(), want64, "f64 len {len} at {at}");
                    cases += 1;
                }
            }
        }
        assert!(cases > 4000, "{cases}");
        // Terms past the row are left alone (the shorter of the two sets the length).
        let mut acc = [1f32; 9];
        add_rows_f32(&mut acc[..8], &[1f32; 12]);
        assert_eq!(acc, [2., 2., 2., 2., 2., 2., 2., 2., 1.]);
    }

    /// The one NaN rule, hand-worked: the first NaN in the sums' order, quieted; a NaN the
    /// sum makes, the positive quiet NaN; a lone signalling NaN kept (a sum of one term).
    #[test]
    fn a_sum_keeps_its_first_nan_quieted() {
        let f32s = |pads: &[i64], mode: Mode, g: &[u32]| -> Vec<u32> {
            let p = plan(DataType::Float32, &[1], pads, mode);
            let grad = Tensor::from_slice(DataType::Float32, vec![g.len()], g).unwrap();
            pad_backward(&p, &grad).unwrap().as_slice::<u32>().unwrap().to_vec()
        };
        // [1] edge (1, 1) sums g0 (pad before), g2 (pad after), g1 (kept).
        let one = 1f32.to_bits();
        assert_eq!(f32s(&[1, 1], Mode::Edge, &[0x7fc0_0001, 0xffc0_0002, one]), [0x7fc0_0001]);
        assert_eq!(f32s(&[1, 1], Mode::Edge, &[one, 0xffc0_0002, 0x7fc0_0001]), [0x7fc0_0001]);
        assert_eq!(f32s(&[1, 1], Mode::Edge, &[one, 0xff80_0003, 0x7fc0_0001]), [0x7fc0_0001]);
        assert_eq!(f32s(&[1, 1], Mode::Edge, &[one, 0x7fc0_0001, 0xff80_0003]), [0xffc0_0003]);
        // +inf + -inf makes the positive quiet NaN, kept before the kept position's NaN.
        let (inf, neg_inf) = (f32::INFINITY.to_bits(), f32::NEG_INFINITY.to_bits());
        assert_eq!(f32s(&[1, 1], Mode::Edge, &[inf, 0x7fc0_0001, neg_inf]), [0x7fc0_0000]);
        assert_eq!(f32s(&[1, 1], Mode::Edge, &[inf, 5, inf]), [inf]);
        // A signalling NaN alone through a constant pad: a sum of one term, kept as it is; two
        // of them (a reflect pad's), the first quieted.
        assert_eq!(f32s(&[1, 1], Mode::Constant, &[0, 0x7f80_0001, 0]), [0x7f80_0001]);
        assert_eq!(f32s(&[1, 1], Mode::Constant, &[0, 0xff80_0001, 0]), [0xff80_0001]);
        let p = plan(DataType::Float32, &[2], &[0, 1], Mode::Reflect); // 1 2 | 1
        let grad = Tensor::from_slice(DataType::Float32, vec![3], &[0xff80_0005u32, 7, 0x7f80_0001]).unwrap();
        assert_eq!(pad_backward(&p, &grad).unwrap().as_slice::<u32>().unwrap(), [0x7fc0_0001, 7]);
        // float64 and complex128 (CPU only) keep the same rule.
        let p = plan(DataType::Float64, &[1], &[1, 1], Mode::Edge);
        let g = [f64::INFINITY.to_bits(), 0x7ff0_0000_0000_0001, f64::NEG_INFINITY.to_bits()];
        let got = pad_backward(&p, &Tensor::from_slice(DataType::Float64, vec![3], &g).unwrap()).unwrap();
        assert_eq!(got.as_slice::<u64>().unwrap(), &[0x7ff8_0000_0000_0000]);
        let g = [1f64.to_bits(), 0xfff0_0000_0000_0005, 0x7ff0_0000_0000_0001];
        let got = pad_backward(&p, &Tensor::from_slice(DataType::Float64, vec![3], &g).unwrap()).unwrap();
        assert_eq!(got.as_slice::<u64>().unwrap(), &[0x7ff8_0000_0000_0001], "the pad after's, before the kept one's");
        // float16: the first NaN quieted, its payload's high bits kept (as `half` narrows).
        let p = plan(DataType::Float16, &[1], &[1, 1], Mode::Edge);
        let got =
            pad_backward(&p, &Tensor::from_slice(DataType::Float16, vec![3], &[0x3c00u16, 0x7c01, 0xfd05]).unwrap());
        assert_eq!(got.unwrap().as_slice::<u16>().unwrap(), &[0xff05], "0xfd05 signals: quieted");
        let got =
            pad_backward(&p, &Tensor::from_slice(DataType::Float16, vec![3], &[0x7c01u16, 0x3c00, 0xfd05]).unwrap());
        assert_eq!(got.unwrap().as_slice::<u16>().unwrap(), &[0x7e01]);
    }

    /// Tensors with an axis of none: an empty grad_in whatever the pads; a grad_in whose
    /// every element is cropped away (an empty grad_out) is zeros.
    #[test]
    fn empty_axes_have_empty_or_zero_gradients() {
        for (shape, pads, mode, want) in [
            (&[2, 0, 3][..], &[1, 0, 0, 1, 0, 2][..], Mode::Constant, &[][..]),
            (&[0, 4], &[0, 1, 0, 1], Mode::Edge, &[]),
            (&[3], &[-2, -1], Mode::Reflect, &[0f32, 0.0, 0.0]),
            (&[2, 2], &[0, -1, 0, -1], Mode::Constant, &[0f32; 4]),
        ] {
            let p = plan(DataType::Float32, shape, pads, mode);
            let grad = Tensor::zeros(DataType::Float32, p.out_shape().to_vec()).unwrap();
            let got = pad_backward(&p, &grad).unwrap();
            assert_eq!(got.shape(), shape);
            assert_eq!(got.as_slice::<f32>().unwrap(), want, "{shape:?} {pads:?}");
        }
    }

    #[test]
    fn integers_and_other_shapes_are_refused() {
        let p = plan(DataType::Int32, &[3], &[1, 1], Mode::Edge);
        let grad = Tensor::zeros(DataType::Int32, vec![5]).unwrap();
        let e = pad_backward(&p, &grad).unwrap_err();
        assert!(matches!(e, PadError::Unsupported { .. }) && e.to_string().contains("no gradient"), "{e}");
        let p = plan(DataType::Float32, &[3], &[1, 1], Mode::Edge);
        let e = pad_backward(&p, &Tensor::zeros(DataType::Float32, vec![4]).unwrap()).unwrap_err();
        assert!(matches!(e, PadError::InvalidTensor { .. }) && e.to_string().contains("shape [5]"), "{e}");
    }
}
