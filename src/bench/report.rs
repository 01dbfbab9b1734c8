//! Turning reports into tables, and two reports into a before/after.

use serde::{Deserialize, Serialize};

use super::{Measurement, Report};

/// One scenario's change between two runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(specta::Type))]
pub struct Delta {
    pub scenario: String,
    pub size: usize,
    pub mode: String,
    pub before_p50_ms: f64,
    pub after_p50_ms: f64,
    /// after / before: below 1 is faster.
    pub ratio: f64,
    /// The difference is smaller than the spread (p95 − p50) of either run: call it noise.
    pub within_noise: bool,
}

fn key(m: &Measurement) -> (String, usize, String, Option<String>) {
    (m.scenario.clone(), m.size, m.mode.clone(), m.peer.clone())
}

/// Pair up the rows two reports share and say how each changed.
pub fn compare(before: &Report, after: &Report) -> Vec<Delta> {
    after
        .results
        .iter()
        .filter_map(|a| {
            let b = before.results.iter().find(|b| key(b) == key(a))?;
            let noise = (b.p95_ms - b.p50_ms).max(a.p95_ms - a.p50_ms);
            Some(Delta {
                scenario: a.scenario.clone(),
                size: a.size,
                mode: a.mode.clone(),
                before_p50_ms: b.p50_ms,
                after_p50_ms: a.p50_ms,
                ratio: if b.p50_ms > 0.0 {
                    a.p50_ms / b.p50_ms
                } else {
                    f64::NAN
                },
                within_noise: (a.p50_ms - b.p50_ms).abs() <= noise,
            })
        })
        .collect()
}

fn ms(v: f64) -> String {
    if v.is_nan() {
        "—".into()
    } else if v < 0.01 {
        format!("{:.4}", v)
    } else if v < 10.0 {
        format!("{:.3}", v)
    } else {
        format!("{:.1}", v)
    }
}

fn verdict(m: &Measurement) -> String {
    match m.target_ms {
        Some(t) if m.mode == "on" => {
            format!("{} {}", ms(t), if m.p50_ms <= t { "met" } else { "MISSED" })
        }
        Some(t) => ms(t),
        None => "—".into(),
    }
}

/// A quality row's recall@1 / recall@5 / MRR.
fn found(m: &Measurement) -> String {
    m.quality
        .map(|q| format!("{:.3} / {:.3} / {:.3}", q.recall_at_1, q.recall_at_5, q.mrr))
        .unwrap_or_default()
}

/// The cells of one result row, in the column order both tables use.
fn cells(m: &Measurement) -> [String; 10] {
    [
        m.scenario.clone(),
        m.size.to_string(),
        m.peer.clone().unwrap_or_else(|| m.mode.clone()),
        m.iterations.to_string(),
        ms(m.p50_ms),
        ms(m.p95_ms),
        ms(m.p99_ms),
        verdict(m),
        m.agreement
            .map(|a| format!("{:.1}%", a * 100.0))
            .unwrap_or_default(),
        found(m),
    ]
}

/// A plain-text table for the terminal.
pub fn render_table(r: &Report) -> String {
    let mut out = format!(
        "{} · {} threads · {:.1} GiB · {} · {} build · UMWELT_PERF {} · kernels {}\n",
        r.machine.cpu,
        r.machine.threads,
        r.machine.memory_gib,
        r.machine.os,
        r.machine.profile,
        r.machine.perf,
        r.machine.kernels
    );
    let line = |c: &[String; 10]| {
        let row = format!(
            "{:<16} {:>7} {:>4} {:>5} {:>10} {:>10} {:>10} {:>16} {:>9} {:>21}",
            c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7], c[8], c[9]
        );
        format!("{}\n", row.trim_end())
    };
    out.push_str(&line(
        &[
            "scenario",
            "size",
            "mode",
            "n",
            "p50 ms",
            "p95 ms",
            "p99 ms",
            "target (p50)",
            "agree",
            "found R@1 / R@5 / MRR",
        ]
        .map(String::from),
    ));
    for m in &r.results {
        out.push_str(&line(&cells(m)));
    }
    out
}

/// Markdown tables in the format of `docs/PERFORMANCE.md`.
pub fn render_markdown(r: &Report) -> String {
    let mc = &r.machine;
    let mut out = format!(
        "Machine: {}, {} threads, {:.1} GiB, {}, {} build; SQLite {}, sqlite-vec {}, ONNX Runtime {}, whisper.cpp {}; UMWELT_PERF {}; vector kernels {}.\n\nCommand: `{}`\n\n",
        mc.cpu, mc.threads, mc.memory_gib, mc.os, mc.profile, mc.sqlite, mc.sqlite_vec, mc.onnxruntime, mc.whisper_cpp, mc.perf, mc.kernels, r.command
    );
    out.push_str("| scenario | size | mode | n | p50 ms | p95 ms | p99 ms | target p50 | agreement | found R@1 / R@5 / MRR |\n|---|---|---|---|---|---|---|---|---|---|\n");
    for m in &r.results {
        out.push_str(&format!("| {} |\n", cells(m).join(" | ")));
    }
    out
}

/// Before and after, side by side.
pub fn render_compare(before: &Report, after: &Report) -> String {
    let mut out = format!(
        "{:<16} {:>7} {:>4} {:>12} {:>12} {:>8}\n",
        "scenario", "size", "mode", "before p50", "after p50", "change"
    );
    for d in compare(before, after) {
        out.push_str(&format!(
            "{:<16} {:>7} {:>4} {:>12} {:>12} {:>8}\n",
            d.scenario,
            d.size,
            d.mode,
            ms(d.before_p50_ms),
            ms(d.after_p50_ms),
            if d.within_noise {
                "noise".to_string()
            } else {
                format!("{:.2}x", 1.0 / d.ratio)
            }
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::{summarise, Machine, REPORT_FORMAT};

    fn report(rows: Vec<Measurement>) -> Report {
        Report {
            format: REPORT_FORMAT.into(),
            started_at: 0,
            machine: Machine::current(),
            command: "umwelt-cli bench".into(),
            results: rows,
        }
    }

    #[test]
    fn deltas_pair_rows_and_mark_noise() {
        let before = report(vec![
            summarise("recall", 1000, "on", vec![10.0, 10.0, 10.5, 11.0], None),
            summarise("remember", 1000, "on", vec![1.0, 1.0, 1.0, 1.1], None),
            summarise("gone", 1, "on", vec![1.0], None),
        ]);
        let after = report(vec![
            summarise("recall", 1000, "on", vec![5.0, 5.0, 5.0, 5.5], None),
            summarise("remember", 1000, "on", vec![1.02, 1.02, 1.03, 1.1], None),
        ]);
        let d = compare(&before, &after);
        assert_eq!(d.len(), 2);
        assert_eq!(d[0].scenario, "recall");
        assert!((d[0].ratio - 0.5).abs() < 1e-9 && !d[0].within_noise);
        assert!(d[1].within_noise, "{:?}", d[1]);
        let text = render_compare(&before, &after);
        assert!(text.contains("2.00x") && text.contains("noise"), "{text}");
    }

    /// A report of `scripts/bench-peers.sh` (peer rows, written by Python, with the fields an
    /// older report lacks) is read like any run; each peer row is its own, named in the tables.
    #[test]
    fn a_peers_report_is_read_and_its_rows_named_by_peer() {
        let mut r = report(vec![summarise(
            "recall_nofilter",
            10_000,
            "on",
            vec![0.4],
            None,
        )]);
        let mut v = serde_json::to_value(&r).unwrap();
        v["machine"].as_object_mut().unwrap().remove("kernels");
        for (peer, p50) in [("numpy", 0.23), ("sqlite-vec", 3.6)] {
            v["results"]
                .as_array_mut()
                .unwrap()
                .push(serde_json::json!({
                    "scenario": "recall_nofilter", "size": 10000, "mode": "peer", "iterations": 30,
                    "p50_ms": p50, "p95_ms": p50, "p99_ms": p50, "min_ms": p50, "max_ms": p50,
                    "target_ms": null, "agreement": null, "peer": peer
                }));
        }
        let back = crate::bench::parse_report(&v.to_string()).unwrap();
        assert_eq!(back.results.len(), 3);
        assert_eq!(back.results[1].peer.as_deref(), Some("numpy"));
        assert_eq!(back.machine.kernels, "");
        let table = render_table(&back);
        assert!(
            table.contains("numpy") && table.contains("sqlite-vec"),
            "{table}"
        );
        // Peers are not Umwelt's runs: a before/after pairs each with itself only.
        r.results = back.results.clone();
        assert_eq!(compare(&back, &r).len(), 3);
    }
}
