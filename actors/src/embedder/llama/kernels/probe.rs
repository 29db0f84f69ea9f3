//! The probe child's work: load exactly one CPU module and multiply a
//! small matrix of each asked-for weight type, the way llama.cpp would,
//! reporting each step on stdout before taking it (see `supervise.rs`
//! for the protocol). It runs in a process of its own because the point
//! is to find out whether it crashes.
//!
//! Per type: 64×256 weights are quantized from fixed pseudo-random values
//! (ggml's own quantizer), placed in each buffer type the module offers
//! that accepts them (its "extra" buffer types first: `AMX`,
//! `CPU_REPACK`, then plain `CPU`; llama.cpp stores a weight in the first
//! one that supports its matrix multiplication, so each is a path a model
//! can take), and multiplied with 1 and with 40 activation rows (ggml's
//! kernels differ for one row and for batches; AMX tiles run only for
//! batches). Results are compared with the dequantized weights multiplied
//! in f64: a kernel that runs but computes garbage is caught as well.

use std::ffi::{CStr, CString};
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use llama_cpp_sys_2 as sys;

use reference::{compare, matmul, pseudo_random};

mod reference;

/// Weight matrix shape: K inputs (a multiple of every block size, and of
/// AMX's alignment), N outputs (a multiple of AMX's 32).
const K: i64 = 256;
const N: i64 = 64;
/// Activation rows of the batched multiplication.
const BATCH: i64 = 40;

/// The results of one multiplication with 1 row and one with [`BATCH`].
type Outputs = (Vec<f32>, Vec<f32>);

/// Why a type has no `ok`.
enum Miss {
    Wrong(String),
    Untestable(String),
}

/// Runs the probe; the return value is the exit code (0 after `done`,
/// 2 when the module does not load).
pub fn run_probe(module: &Path, types: &[String]) -> i32 {
    no_core_dumps();
    let mut out = std::io::stdout().lock();
    let mut say = |line: String| {
        // The parent reads these as they come: a line must be out before
        // the step it announces can crash the process.
        let _ = writeln!(out, "{line}");
        let _ = out.flush();
    };
    // SAFETY: `warnings_only` matches `ggml_log_callback`.
    unsafe { sys::ggml_log_set(Some(warnings_only), std::ptr::null_mut()) };
    let reg = match load(module) {
        Ok(reg) => reg,
        Err(why) => {
            say(format!("fail {why}"));
            return 2;
        }
    };
    say(format!(
        "features {}",
        super::super::cpu_backend::reg_features(reg).join(" ")
    ));
    let device = match Device::open(reg) {
        Ok(d) => d,
        Err(why) => {
            say(format!("fail {why}"));
            return 2;
        }
    };
    for ty in types {
        say(format!("start {ty}"));
        let line = match type_by_name(ty) {
            None => format!("skip {ty} not a ggml type"),
            Some(t) => match device.check(t) {
                Ok(buffers) => format!("ok {ty} {}", buffers.join(",")),
                Err(Miss::Wrong(how)) => format!("wrong {ty} {how}"),
                Err(Miss::Untestable(why)) => format!("skip {ty} {why}"),
            },
        };
        say(line);
    }
    say("done".into());
    0
}

/// A crash here is expected, not a bug to report: no core file, no
/// systemd-coredump entry.
fn no_core_dumps() {
    // SAFETY: prctl(PR_SET_DUMPABLE, 0) only changes this process's flag.
    unsafe {
        libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0);
    }
}

/// Passes ggml's warnings and errors to stderr (the parent quotes the last
/// line when the child fails); drops the rest.
unsafe extern "C" fn warnings_only(
    level: sys::ggml_log_level,
    text: *const std::os::raw::c_char,
    _user: *mut std::os::raw::c_void,
) {
    if (level == sys::GGML_LOG_LEVEL_WARN || level == sys::GGML_LOG_LEVEL_ERROR) && !text.is_null()
    {
        // SAFETY: ggml passes a NUL-terminated message.
        let text = unsafe { CStr::from_ptr(text) };
        eprint!("{}", text.to_string_lossy());
    }
}

/// `ggml_backend_load` on exactly this file (never a directory search).
fn load(module: &Path) -> Result<sys::ggml_backend_reg_t, String> {
    let path = CString::new(module.as_os_str().as_bytes())
        .map_err(|_| format!("{}: not a usable file name", module.display()))?;
    // SAFETY: a valid C string; ggml copies it. A null result means the
    // file did not load (ggml logged why).
    let reg = unsafe { sys::ggml_backend_load(path.as_ptr()) };
    if reg.is_null() {
        Err(format!("{}: ggml could not load it", module.display()))
    } else {
        Ok(reg)
    }
}

/// The ggml type with this name (`q8_0`), by ggml's own names.
fn type_by_name(name: &str) -> Option<sys::ggml_type> {
    (0..sys::GGML_TYPE_COUNT).find(|&t| {
        // SAFETY: any id below the count has a static name (maybe a
        // "removed" note) in ggml's type table.
        let raw = unsafe { sys::ggml_type_name(t) };
        !raw.is_null() && unsafe { CStr::from_ptr(raw) }.to_bytes() == name.as_bytes()
    })
}

/// The module's CPU device and backend, and its buffer types in the order
/// llama.cpp tries them.
struct Device {
    dev: sys::ggml_backend_dev_t,
    backend: sys::ggml_backend_t,
    bufts: Vec<(sys::ggml_backend_buffer_type_t, String)>,
}

impl Device {
    fn open(reg: sys::ggml_backend_reg_t) -> Result<Self, String> {
        type ExtraBufts =
            unsafe extern "C" fn(sys::ggml_backend_dev_t) -> *mut sys::ggml_backend_buffer_type_t;
        type SetThreads = unsafe extern "C" fn(sys::ggml_backend_t, std::os::raw::c_int);
        // SAFETY: ggml's registry API on a loaded CPU module; the proc
        // names and signatures are ggml's (`ggml_backend_dev_get_extra_bufts_t`,
        // `ggml_backend_set_n_threads_t`); the extra list ends with NULL.
        unsafe {
            let dev = sys::ggml_backend_reg_dev_get(reg, 0);
            if dev.is_null() {
                return Err("the module has no device".into());
            }
            let backend = sys::ggml_backend_dev_init(dev, std::ptr::null());
            if backend.is_null() {
                return Err("the module's backend did not start".into());
            }
            let threads =
                sys::ggml_backend_reg_get_proc_address(reg, c"ggml_backend_set_n_threads".as_ptr());
            if !threads.is_null() {
                let set: SetThreads = std::mem::transmute(threads);
                set(backend, 1);
            }
            let mut bufts = Vec::new();
            let extra = sys::ggml_backend_reg_get_proc_address(
                reg,
                c"ggml_backend_dev_get_extra_bufts".as_ptr(),
            );
            if !extra.is_null() {
                let get: ExtraBufts = std::mem::transmute(extra);
                let mut item = get(dev);
                while !item.is_null() && !(*item).is_null() {
                    bufts.push(*item);
                    item = item.add(1);
                }
            }
            bufts.push(sys::ggml_backend_dev_buffer_type(dev));
            let bufts = bufts
                .into_iter()
                .map(|b| {
                    let name = sys::ggml_backend_buft_name(b);
                    let name = if name.is_null() {
                        "?".to_owned()
                    } else {
                        CStr::from_ptr(name).to_string_lossy().into_owned()
                    };
                    (b, name)
                })
                .collect();
            Ok(Self {
                dev,
                backend,
                bufts,
            })
        }
    }

    /// Multiplies a `ty` matrix in every buffer type that takes it.
    fn check(&self, ty: sys::ggml_type) -> Result<Vec<String>, Miss> {
        let (quantized, reference) = weights(ty)?;
        let x1 = pseudo_random(K as usize, 2);
        let xb = pseudo_random((K * BATCH) as usize, 3);
        let want1 = matmul(&reference, &x1, K as usize);
        let wantb = matmul(&reference, &xb, K as usize);
        let mut tested = Vec::new();
        for (buft, name) in &self.bufts {
            let Some((got1, gotb)) = self.multiply(*buft, ty, &quantized, &x1, &xb)? else {
                continue;
            };
            compare(&got1, &want1)
                .and_then(|()| compare(&gotb, &wantb))
                .map_err(|how| Miss::Wrong(format!("{name} buffer: {how}")))?;
            tested.push(name.clone());
        }
        if tested.is_empty() {
            return Err(Miss::Untestable("no buffer type takes it".into()));
        }
        Ok(tested)
    }

    /// One graph with both multiplications, weights in `buft`; `None` when
    /// that buffer type does not take these weights.
    fn multiply(
        &self,
        buft: sys::ggml_backend_buffer_type_t,
        ty: sys::ggml_type,
        quantized: &[u8],
        x1: &[f32],
        xb: &[f32],
    ) -> Result<Option<Outputs>, Miss> {
        let mut g = Graph::default();
        // SAFETY: ggml's C API used as documented; every object is freed by
        // `Graph`'s drop; sizes passed to tensor_set/get are the tensors'
        // own byte sizes, checked against the Rust buffers first.
        unsafe {
            let meta = |n: usize| sys::ggml_init_params {
                mem_size: sys::ggml_tensor_overhead() * n + sys::ggml_graph_overhead(),
                mem_buffer: std::ptr::null_mut(),
                no_alloc: true,
            };
            g.weights_ctx = sys::ggml_init(meta(1));
            g.ctx = sys::ggml_init(meta(8));
            if g.weights_ctx.is_null() || g.ctx.is_null() {
                return Err(Miss::Untestable("ggml_init failed".into()));
            }
            let w = sys::ggml_new_tensor_2d(g.weights_ctx, ty, K, N);
            let t1 = sys::ggml_new_tensor_2d(g.ctx, sys::GGML_TYPE_F32, K, 1);
            let tb = sys::ggml_new_tensor_2d(g.ctx, sys::GGML_TYPE_F32, K, BATCH);
            let y1 = sys::ggml_mul_mat(g.ctx, w, t1);
            let yb = sys::ggml_mul_mat(g.ctx, w, tb);
            g.weights_buf = sys::ggml_backend_alloc_ctx_tensors_from_buft(g.weights_ctx, buft);
            if g.weights_buf.is_null() {
                return Ok(None);
            }
            // llama.cpp asks the same question with a batch (512 rows).
            if !sys::ggml_backend_dev_supports_op(self.dev, yb) {
                return Ok(None);
            }
            g.buf = sys::ggml_backend_alloc_ctx_tensors(g.ctx, self.backend);
            if g.buf.is_null() || sys::ggml_nbytes(w) != quantized.len() {
                return Err(Miss::Untestable("cannot allocate the test tensors".into()));
            }
            // For AMX and CPU_REPACK this is where weights are repacked.
            sys::ggml_backend_tensor_set(w, quantized.as_ptr().cast(), 0, quantized.len());
            sys::ggml_backend_tensor_set(t1, x1.as_ptr().cast(), 0, std::mem::size_of_val(x1));
            sys::ggml_backend_tensor_set(tb, xb.as_ptr().cast(), 0, std::mem::size_of_val(xb));
            let graph = sys::ggml_new_graph(g.ctx);
            sys::ggml_build_forward_expand(graph, y1);
            sys::ggml_build_forward_expand(graph, yb);
            let status = sys::ggml_backend_graph_compute(self.backend, graph);
            if status != sys::GGML_STATUS_SUCCESS {
                return Err(Miss::Wrong(format!("compute returned status {status}")));
            }
            let mut got1 = vec![0f32; N as usize];
            let mut gotb = vec![0f32; (N * BATCH) as usize];
            for (t, out) in [(y1, &mut got1), (yb, &mut gotb)] {
                if sys::ggml_nbytes(t) != std::mem::size_of_val(out.as_slice()) {
                    return Err(Miss::Untestable("unexpected result size".into()));
                }
                sys::ggml_backend_tensor_get(t, out.as_mut_ptr().cast(), 0, sys::ggml_nbytes(t));
            }
            Ok(Some((got1, gotb)))
        }
    }
}

impl Drop for Device {
    fn drop(&mut self) {
        // SAFETY: created by ggml_backend_dev_init, freed once.
        unsafe { sys::ggml_backend_free(self.backend) };
    }
}

/// The ggml objects of one test, freed in reverse order.
struct Graph {
    weights_ctx: *mut sys::ggml_context,
    ctx: *mut sys::ggml_context,
    weights_buf: sys::ggml_backend_buffer_t,
    buf: sys::ggml_backend_buffer_t,
}

impl Default for Graph {
    fn default() -> Self {
        Self {
            weights_ctx: std::ptr::null_mut(),
            ctx: std::ptr::null_mut(),
            weights_buf: std::ptr::null_mut(),
            buf: std::ptr::null_mut(),
        }
    }
}

impl Drop for Graph {
    fn drop(&mut self) {
        // SAFETY: each pointer is null or owned by this struct alone.
        unsafe {
            if !self.buf.is_null() {
                sys::ggml_backend_buffer_free(self.buf);
            }
            if !self.weights_buf.is_null() {
                sys::ggml_backend_buffer_free(self.weights_buf);
            }
            if !self.ctx.is_null() {
                sys::ggml_free(self.ctx);
            }
            if !self.weights_ctx.is_null() {
                sys::ggml_free(self.weights_ctx);
            }
        }
    }
}

/// N×K weights of type `ty` (ggml's quantizer) and their dequantized
/// values (the reference computes with exactly what the kernel sees).
fn weights(ty: sys::ggml_type) -> Result<(Vec<u8>, Vec<f32>), Miss> {
    let source = pseudo_random((N * K) as usize, 1);
    // SAFETY: ggml's type table and quantizer; `ty` is below the type
    // count; buffers are sized by ggml_row_size for N rows of K.
    unsafe {
        let traits = sys::ggml_get_type_traits(ty);
        if traits.is_null() || (*traits).blck_size <= 0 || K % (*traits).blck_size != 0 {
            return Err(Miss::Untestable("ggml has no blocks of this type".into()));
        }
        let mut quantized = vec![0u8; sys::ggml_row_size(ty, K) * N as usize];
        let importance = vec![1f32; K as usize];
        let written = sys::ggml_quantize_chunk(
            ty,
            source.as_ptr(),
            quantized.as_mut_ptr().cast(),
            0,
            N,
            K,
            importance.as_ptr(),
        );
        if written != quantized.len() {
            return Err(Miss::Untestable("ggml cannot quantize to it".into()));
        }
        if ty == sys::GGML_TYPE_F32 {
            return Ok((quantized, source));
        }
        let Some(to_float) = (*traits).to_float else {
            return Err(Miss::Untestable("ggml cannot dequantize it".into()));
        };
        let mut reference = vec![0f32; (N * K) as usize];
        to_float(quantized.as_ptr().cast(), reference.as_mut_ptr(), N * K);
        Ok((quantized, reference))
    }
}
