//! The conformance corpus: where it is, its cases, and running them on a path.

use std::path::{Path, PathBuf};

use wgpu_pad::{npy, DataType, Mode, PadError, PadPlan, PadRequest, Tensor};

/// The corpus: `$WGPU_PAD_CONFORMANCE` if set, else the repository's copy in
/// `tests/data/conformance/cases`. `None` where that copy is absent (the published package
/// leaves it out): the corpus tests then say so and have nothing to run.
pub fn corpus_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("WGPU_PAD_CONFORMANCE").map(PathBuf::from) {
        assert!(dir.is_dir(), "WGPU_PAD_CONFORMANCE={} is not a folder", dir.display());
        return Some(dir);
    }
    // This crate's copy, or the workspace root's for a crate under integrations/.
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = manifest.join("tests/data/conformance/cases");
    if dir.is_dir() {
        return Some(dir);
    }
    let root = manifest.join("../../tests/data/conformance/cases");
    if manifest.parent().is_some_and(|p| p.ends_with("integrations")) && root.is_dir() {
        return Some(root);
    }
    eprintln!(
        "no conformance corpus at {}: nothing to run (the published package leaves it out; set WGPU_PAD_CONFORMANCE to a corpus's cases folder)",
        dir.display()
    );
    None
}

/// Whether the corpus is the repository's own (not `$WGPU_PAD_CONFORMANCE`): only its
/// sizes are known, so only it is held to minimum counts; another corpus must have a case.
pub fn bundled_corpus() -> bool {
    std::env::var_os("WGPU_PAD_CONFORMANCE").is_none()
}

/// Checks a count from a corpus run, printing it: at least `bundled_min` in the bundled
/// corpus, at least `other_min` in another.
pub fn check_count(what: &str, count: usize, bundled_min: usize, other_min: usize) {
    eprintln!("{what}: {count}");
    let (min, corpus) =
        if bundled_corpus() { (bundled_min, "the bundled corpus") } else { (other_min, "$WGPU_PAD_CONFORMANCE") };
    assert!(count >= min, "{what}: only {count} in {corpus} (at least {min})");
}

/// One case of the corpus.
pub struct Case {
    pub name: String,
    pub dir: PathBuf,
    pub dtype: DataType,
    pub mode: String,
    pub pads: Vec<i64>,
    pub axes: Option<Vec<i64>>,
    /// Interior padding, one per axis padded (the interior corpus only).
    pub interior: Option<Vec<i64>>,
    pub input: Tensor,
    pub input_descr: npy::Descr,
    pub value: Option<Tensor>,
    /// `Ok(expected)` or `Err(error_kind)`.
    pub expect: Result<Tensor, String>,
}

fn load_npy(path: &Path, dtype: DataType) -> (Tensor, npy::Descr) {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let n = npy::parse(&bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let t = npy::to_tensor(&n, Some(dtype)).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    (t, n.descr)
}

/// Every case of the corpus; none where there is no corpus (see [`corpus_dir`]).
pub fn cases() -> Vec<Case> {
    let Some(dir) = corpus_dir() else { return Vec::new() };
    cases_in(&dir)
}

/// The interior-padding corpus (`tests/data/interior/cases`, made by its `generate.py`); none
/// where it is absent (the published package).
pub fn interior_cases() -> Vec<Case> {
    // This crate's copy, or the workspace root's for a crate under integrations/.
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut dir = manifest.join("tests/data/interior/cases");
    if !dir.is_dir() && manifest.parent().is_some_and(|p| p.ends_with("integrations")) {
        dir = manifest.join("../../tests/data/interior/cases");
    }
    if !dir.is_dir() {
        eprintln!("no interior corpus at {}: nothing to run", dir.display());
        return Vec::new();
    }
    cases_in(&dir)
}

/// The cases of a corpus folder, in name order.
pub fn cases_in(dir: &Path) -> Vec<Case> {
    let mut dirs: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    dirs.sort();
    dirs.into_iter()
        .map(|dir| {
            let json: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(dir.join("case.json")).unwrap()).unwrap();
            let dtype: DataType = json["dtype"].as_str().unwrap().parse().unwrap();
            let ints = |v: &serde_json::Value| v.as_array().unwrap().iter().map(|x| x.as_i64().unwrap()).collect();
            let (input, input_descr) = load_npy(&dir.join("input.npy"), dtype);
            let value = dir.join("value.npy").exists().then(|| load_npy(&dir.join("value.npy"), dtype).0);
            let expect = if json["expect"] == "ok" {
                Ok(load_npy(&dir.join("expected.npy"), dtype).0)
            } else {
                Err(json["error_kind"].as_str().unwrap().to_string())
            };
            Case {
                name: dir.file_name().unwrap().to_string_lossy().into_owned(),
                dtype,
                mode: json["mode"].as_str().unwrap().to_string(),
                pads: ints(&json["pads"]),
                axes: (!json["axes"].is_null()).then(|| ints(&json["axes"])),
                interior: json.get("interior").map(ints),
                input,
                input_descr,
                value,
                expect,
                dir,
            }
        })
        .collect()
}

impl Case {
    /// The plan through the direct API.
    pub fn plan(&self) -> Result<PadPlan, PadError> {
        let mode: Mode = self.mode.parse()?;
        let mut req = PadRequest::new(self.pads.clone()).mode(mode);
        if let Some(a) = &self.axes {
            req = req.axes(a.clone());
        }
        if let Some(v) = &self.value {
            req = req.constant(v.clone());
        }
        if let Some(k) = &self.interior {
            req = req.interior(k.clone());
        }
        PadPlan::new(self.dtype, self.input.shape(), &req)
    }
}

/// Does `err` match the corpus's `error_kind`?
pub fn error_matches(err: &PadError, kind: &str) -> bool {
    matches!(
        (kind, err),
        ("mode", PadError::InvalidMode { .. })
            | ("pads length", PadError::PadsLength { .. })
            | ("axis out of range", PadError::AxisOutOfRange { .. })
            | ("repeated axis", PadError::RepeatedAxis { .. })
            | ("negative output dim", PadError::NegativeOutputDim { .. })
            | ("empty axis after cropping", PadError::EmptyAxis { .. })
            | ("interior", PadError::Interior { .. })
    )
}

/// What the message of the corpus's `error_kind` says, as the command line prints it (the
/// error's own words, from `PadError`'s messages).
pub fn error_words(kind: &str) -> &'static str {
    match kind {
        "mode" => "invalid mode",
        "pads length" => "pads has ",
        "axis out of range" => "is out of range for rank",
        "repeated axis" => "is repeated",
        "negative output dim" => "< 0",
        "empty axis after cropping" => "nothing left to",
        "interior" => "interior padding",
        _ => panic!("an error kind the corpus format does not have: {kind:?}"),
    }
}

/// Runs every case through `pad`, returning one line per failure.
pub fn run_corpus(pad: impl FnMut(&Case, &PadPlan) -> Result<Tensor, PadError>) -> (usize, Vec<String>) {
    run_corpus_except(|_| false, pad)
}

/// [`run_corpus`] without the cases whose plan `skip` passes over (counted neither as run
/// nor failed: the total is of the cases run).
pub fn run_corpus_except(
    skip: impl Fn(&PadPlan) -> bool,
    pad: impl FnMut(&Case, &PadPlan) -> Result<Tensor, PadError>,
) -> (usize, Vec<String>) {
    let cases: Vec<Case> = cases().into_iter().filter(|c| c.plan().map_or(true, |p| !skip(&p))).collect();
    let failures = run_cases(&cases, pad);
    (cases.len(), failures)
}

/// Runs `cases` through `pad`, returning one line per failure.
pub fn run_cases(cases: &[Case], mut pad: impl FnMut(&Case, &PadPlan) -> Result<Tensor, PadError>) -> Vec<String> {
    let mut failures = Vec::new();
    for case in cases {
        let got = case.plan().and_then(|plan| pad(case, &plan));
        match (&case.expect, got) {
            (Ok(want), Ok(got)) if &got == want => {}
            (Ok(want), Ok(got)) => failures.push(format!(
                "{}: got shape {:?}, expected {:?} (data differs: {})",
                case.name,
                got.shape(),
                want.shape(),
                got.data() != want.data()
            )),
            (Ok(_), Err(e)) => failures.push(format!("{}: unexpected error {e}", case.name)),
            (Err(kind), Ok(_)) => failures.push(format!("{}: expected error {kind:?}, got a result", case.name)),
            (Err(kind), Err(e)) if error_matches(&e, kind) => {}
            (Err(kind), Err(e)) => failures.push(format!("{}: expected error {kind:?}, got {e}", case.name)),
        }
    }
    failures
}
