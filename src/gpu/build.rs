//! The one builder every program goes through. A kind of program (a pad, `layout.rs`; an
//! interior pad, `interior.rs`; a gradient's windows, `backward/windows.rs`) has checked its
//! views and made its axes and uniform when it is made; [`build`] then cuts its box into
//! binding windows with the one splitter ([`split`]), has the kind settle its shader once for
//! all of them, and makes the program of that pipeline. A gradient is a few such programs one
//! after another (`Program::then`): the forward's crop, then its borders' windows.

use crate::error::{GpuLimit, PadError, Result};

use super::program::{Dispatch, Program};
use super::shader::PipelineKey;
use super::view::Span;
use super::window::{split, Extent};

/// A kind of program, as [`build`] asks it.
pub(super) trait Kind {
    /// A window before the kind's shader is settled (which may change its uniform and grid).
    type Window;

    /// The box the windows are cut from (per axis, outermost first: first index and length),
    /// and the indices of each axis a window's piece of it takes at a time.
    fn extent(&self) -> (Vec<(usize, usize)>, Vec<usize>);

    /// The window of box `b`, or `None` where it does not fit a binding (the splitter cuts it).
    fn window(&self, b: &Extent) -> Result<Option<Self::Window>>;

    /// The one pipeline every window runs, decided once for all of them, and their dispatches.
    fn settle(&self, windows: Vec<Self::Window>) -> (PipelineKey, Vec<Dispatch>);

    /// The bytes of the view the program reads and of the one it writes (`None` where empty).
    fn spans(&self) -> (Option<Span>, Option<Span>);
}

/// The program of `kind`: its box cut into as few windows as fit bindings of `max_binding`
/// bytes ([`split`]; the whole box first, one dispatch where it fits), its shader settled.
pub(super) fn build(kind: &impl Kind, max_binding: u64) -> Result<Program> {
    let (whole, granules) = kind.extent();
    let windows = split(&whole, &granules, max_binding, &mut |b| kind.window(b))?;
    let (key, dispatches) = kind.settle(windows);
    let (read, write) = kind.spans();
    Ok(Program::of(key, dispatches, read, write))
}

/// `None` for a [`GpuLimit::Windows`] (what did not fit a binding), which a kind's window
/// answers so that the splitter cuts it, and a caller with another way takes it.
pub(super) fn fits<T>(result: Result<T>) -> Result<Option<T>> {
    match result {
        Err(PadError::GpuLimit { limit: GpuLimit::Windows, .. }) => Ok(None),
        result => result.map(Some),
    }
}
