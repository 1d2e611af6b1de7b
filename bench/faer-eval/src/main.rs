//! The evaluation behind oxla's LAPACK handlers: the routines JAX's CPU
//! lowering calls (`potrf`, `getrf` + `getrs`, `syevd`, `gesdd`, `geqrf` +
//! `orgqr`) from the system's LAPACK (Debian's OpenBLAS, through the
//! `lapack` binding crate), against the pure-Rust `faer` doing the same
//! decompositions (its default parallelism), in one run. f32 matrices
//! 256×256, 1024×1024 and a batch of 64 32×32 (both loop over the batch);
//! `solve` has 16 right-hand sides, `svd` is the thin one with vectors.
//!
//! `cargo run --release --manifest-path bench/faer-eval/Cargo.toml`

use std::time::Instant;

use faer::Mat;
use faer::linalg::solvers::Solve;

/// Deterministic numbers in [-1, 1) (a 64-bit LCG).
fn numbers(n: usize, seed: u64) -> Vec<f32> {
    let mut state = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
    (0..n)
        .map(|_| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((state >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
        })
        .collect()
}

/// One problem: a general matrix, a symmetric positive definite one
/// (`A Aᵀ + n I`) and 16 right-hand sides, column-major.
struct Problem {
    n: usize,
    a: Vec<f32>,
    spd: Vec<f32>,
    b: Vec<f32>,
}

impl Problem {
    fn new(n: usize, seed: u64) -> Problem {
        let a = numbers(n * n, seed);
        let mut spd = vec![0f32; n * n];
        for i in 0..n {
            for j in 0..n {
                let dot: f32 = (0..n).map(|k| a[i + k * n] * a[j + k * n]).sum();
                spd[i + j * n] = dot + if i == j { n as f32 } else { 0.0 };
            }
        }
        Problem {
            n,
            a,
            spd,
            b: numbers(n * 16, seed + 1000),
        }
    }

    fn faer(&self, data: &[f32], cols: usize) -> Mat<f32> {
        Mat::from_fn(self.n, cols, |i, j| data[i + j * self.n])
    }
}

fn check(routine: &str, info: i32) -> anyhow::Result<()> {
    anyhow::ensure!(info == 0, "{routine}: info {info}");
    Ok(())
}

/// The optimal workspace size a LAPACK query returned.
fn lwork(query: f32) -> usize {
    query.max(1.0) as usize
}

/// One decomposition of `p` by LAPACK, on copies (LAPACK works in place).
fn lapack_op(op: &str, p: &Problem) -> anyhow::Result<()> {
    let n = p.n as i32;
    let mut info = 0;
    // SAFETY (every call): the slices have the sizes LAPACK reads and
    // writes for these dimensions and leading dimensions, and the
    // workspaces the sizes its queries asked for.
    match op {
        "cholesky" => {
            let mut a = p.spd.clone();
            unsafe { lapack::spotrf(b'L', n, &mut a, n, &mut info) };
            check("spotrf", info)?;
        }
        "solve" => {
            let (mut a, mut b) = (p.a.clone(), p.b.clone());
            let mut ipiv = vec![0; p.n];
            unsafe { lapack::sgetrf(n, n, &mut a, n, &mut ipiv, &mut info) };
            check("sgetrf", info)?;
            unsafe { lapack::sgetrs(b'N', n, 16, &a, n, &ipiv, &mut b, n, &mut info) };
            check("sgetrs", info)?;
        }
        "eigh" => {
            let mut a = p.spd.clone();
            let mut w = vec![0f32; p.n];
            let (mut work, mut iwork) = (vec![0f32; 1], vec![0; 1]);
            unsafe {
                lapack::ssyevd(
                    b'V', b'L', n, &mut a, n, &mut w, &mut work, -1, &mut iwork, -1, &mut info,
                )
            };
            check("ssyevd query", info)?;
            let (lw, liw) = (lwork(work[0]), iwork[0].max(1) as usize);
            let (mut work, mut iwork) = (vec![0f32; lw], vec![0; liw]);
            unsafe {
                lapack::ssyevd(
                    b'V', b'L', n, &mut a, n, &mut w, &mut work, lw as i32, &mut iwork, liw as i32,
                    &mut info,
                )
            };
            check("ssyevd", info)?;
        }
        "svd" => {
            let mut a = p.a.clone();
            let mut s = vec![0f32; p.n];
            let (mut u, mut vt) = (vec![0f32; p.n * p.n], vec![0f32; p.n * p.n]);
            let mut iwork = vec![0; 8 * p.n];
            let mut work = vec![0f32; 1];
            unsafe {
                lapack::sgesdd(
                    b'S', n, n, &mut a, n, &mut s, &mut u, n, &mut vt, n, &mut work, -1,
                    &mut iwork, &mut info,
                )
            };
            check("sgesdd query", info)?;
            let lw = lwork(work[0]);
            let mut work = vec![0f32; lw];
            unsafe {
                lapack::sgesdd(
                    b'S', n, n, &mut a, n, &mut s, &mut u, n, &mut vt, n, &mut work, lw as i32,
                    &mut iwork, &mut info,
                )
            };
            check("sgesdd", info)?;
        }
        "qr" => {
            let mut a = p.a.clone();
            let mut tau = vec![0f32; p.n];
            let mut work = vec![0f32; 1];
            unsafe { lapack::sgeqrf(n, n, &mut a, n, &mut tau, &mut work, -1, &mut info) };
            check("sgeqrf query", info)?;
            let lw = lwork(work[0]);
            let mut work = vec![0f32; lw];
            unsafe { lapack::sgeqrf(n, n, &mut a, n, &mut tau, &mut work, lw as i32, &mut info) };
            check("sgeqrf", info)?;
            let mut work = vec![0f32; 1];
            unsafe { lapack::sorgqr(n, n, n, &mut a, n, &tau, &mut work, -1, &mut info) };
            check("sorgqr query", info)?;
            let lw = lwork(work[0]);
            let mut work = vec![0f32; lw];
            unsafe { lapack::sorgqr(n, n, n, &mut a, n, &tau, &mut work, lw as i32, &mut info) };
            check("sorgqr", info)?;
        }
        other => anyhow::bail!("no op {other}"),
    }
    Ok(())
}

/// The same decomposition by faer.
fn faer_op(op: &str, p: &Problem) -> anyhow::Result<()> {
    match op {
        "cholesky" => {
            let l = p
                .faer(&p.spd, p.n)
                .llt(faer::Side::Lower)
                .map_err(|e| anyhow::anyhow!("faer llt: {e:?}"))?;
            std::hint::black_box(l.L());
        }
        "solve" => {
            let b = p.faer(&p.b, 16);
            std::hint::black_box(p.faer(&p.a, p.n).partial_piv_lu().solve(&b));
        }
        "eigh" => {
            let e = p
                .faer(&p.spd, p.n)
                .self_adjoint_eigen(faer::Side::Lower)
                .map_err(|e| anyhow::anyhow!("faer eigh: {e:?}"))?;
            std::hint::black_box(e.S());
        }
        "svd" => {
            let s = p
                .faer(&p.a, p.n)
                .thin_svd()
                .map_err(|e| anyhow::anyhow!("faer svd: {e:?}"))?;
            std::hint::black_box(s.S());
        }
        "qr" => {
            std::hint::black_box(p.faer(&p.a, p.n).qr().compute_thin_Q());
        }
        other => anyhow::bail!("no op {other}"),
    }
    Ok(())
}

/// The median of `runs` timings of `f` over the batch, in milliseconds,
/// after one warm-up.
fn median_ms(
    runs: usize,
    problems: &[Problem],
    f: impl Fn(&Problem) -> anyhow::Result<()>,
) -> anyhow::Result<f64> {
    let mut times = Vec::with_capacity(runs);
    for round in 0..=runs {
        let start = Instant::now();
        for p in problems {
            f(p)?;
        }
        if round > 0 {
            times.push(start.elapsed().as_secs_f64() * 1e3);
        }
    }
    times.sort_by(f64::total_cmp);
    Ok(times[times.len() / 2])
}

fn main() -> anyhow::Result<()> {
    println!("| workload | LAPACK (ms) | faer (ms) | faer / LAPACK |");
    println!("|---|---|---|---|");
    for (label, n, batch) in [
        ("256", 256usize, 1usize),
        ("1024", 1024, 1),
        ("64x32x32", 32, 64),
    ] {
        let problems: Vec<Problem> = (0..batch).map(|k| Problem::new(n, 17 + k as u64)).collect();
        let runs = if n >= 1024 { 5 } else { 21 };
        for op in ["cholesky", "solve", "eigh", "svd", "qr"] {
            let lapack = median_ms(runs, &problems, |p| lapack_op(op, p))?;
            let faer = median_ms(runs, &problems, |p| faer_op(op, p))?;
            println!(
                "| {op} {label} | {lapack:.3} | {faer:.3} | {:.2} |",
                faer / lapack
            );
        }
    }
    Ok(())
}
