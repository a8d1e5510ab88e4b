//! Runs the parsed subcommands: loads inputs, calls one report module, writes its
//! output. Exit code 1 (with the message) on any error; `verify` exits 1 on a
//! mismatch too.

use crate::cli::{Cli, Command, ExportFormat, P3Command, ReportFormat};
use crate::report::{self, load::load, source::SourceRoot};
use anyhow::{Context as _, Result};
use pathprof_llvm::timings::{self, Phase};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Writes `text` to standard output; a broken pipe (`pathprof ... | head`)
/// comes back as an error that `main` ends on quietly.
pub(crate) fn print(text: &str) -> Result<ExitCode> {
    std::io::stdout().write_all(text.as_bytes())?;
    Ok(ExitCode::SUCCESS)
}

fn write_or_print(output: Option<&Path>, text: &str) -> Result<ExitCode> {
    match output {
        Some(p) => {
            pathprof_io::output::write_new(p, text.as_bytes())
                .with_context(|| format!("cannot write {}", p.display()))?;
            Ok(ExitCode::SUCCESS)
        }
        None => print(text),
    }
}

pub fn run(cli: Cli) -> Result<ExitCode> {
    match cli.command {
        Command::Instrument {
            input,
            output,
            options,
        } => {
            if options.mode.p3() {
                anyhow::bail!(
                    "--mode=p3 builds K programs from the linked program: use `pathprof cc \
                     --mode=p3 --copies=K ... -o prog` (it writes prog.p3.0 ... and prog.ppmap)"
                );
            }
            let started = std::time::Instant::now();
            if options.time_report {
                timings::enable();
            }
            let context = pathprof_llvm::Context::create();
            let module = timings::time(Phase::Bitcode, || {
                pathprof_llvm::load_bitcode(&context, &input)
            })?;
            let map_file = crate::driver::instrument(&module, &options)?;
            let shown_output = output.display().to_string();
            crate::driver::hashed::note(std::slice::from_ref(&map_file), &shown_output, &options);
            if let (true, Some(list_path)) = (options.mode.ppp(), &options.interesting) {
                let list = pathprof_llvm::pipeline::read_interesting(list_path)?;
                report::ppp::warn_unknown(&list, list_path, &[&map_file], options.verbose);
            }
            if !module.write_bitcode_to_path(&output) {
                anyhow::bail!("cannot write {}", output.display());
            }
            let map_path = options
                .map
                .unwrap_or_else(|| crate::driver::default_map_path(&output));
            pathprof_io::map::write(&map_file, &map_path)
                .with_context(|| format!("cannot write the map file {}", map_path.display()))?;
            if options.time_report {
                eprint!("{}", timings::take().table(started.elapsed()));
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Report { inputs, format } => {
            let loaded = load(&inputs.map, &inputs.profiles)?;
            match format {
                ReportFormat::Json => print(
                    &(serde_json::to_string_pretty(&pathprof_report::json::Report::of(&loaded))?
                        + "\n"),
                ),
                ReportFormat::Text => print(&report::summary::report(&loaded)),
            }
        }
        Command::Paths {
            inputs,
            function,
            top,
            sort,
            source,
        } => {
            let loaded = load(&inputs.map, &inputs.profiles)?;
            print(&report::paths::report(
                &loaded,
                function.as_deref(),
                top,
                sort,
                &SourceRoot(source.source_root),
            )?)
        }
        Command::Lines {
            map,
            args,
            mut files,
            instructions,
            source,
        } => {
            let (profiles, names) = report::load::split_profiles(args);
            files.extend(names);
            let loaded = load(&map, &profiles)?;
            print(&report::listing::report(
                &loaded,
                &files,
                instructions,
                &SourceRoot(source.source_root),
            )?)
        }
        Command::Funcs { inputs, sort } => {
            let loaded = load(&inputs.map, &inputs.profiles)?;
            print(&report::funcs::functions(&loaded, sort))
        }
        Command::Files { inputs, sort } => {
            let loaded = load(&inputs.map, &inputs.profiles)?;
            print(&report::funcs::files(&loaded, sort))
        }
        Command::Coverage { inputs } => {
            let loaded = load(&inputs.map, &inputs.profiles)?;
            print(&report::coverage::report(&loaded))
        }
        Command::Verify {
            map,
            path_profile,
            edge_map,
            edge_profile,
        } => {
            let paths = load(&map, &[path_profile])?;
            let edges = load(&edge_map, &[edge_profile])?;
            let verification = pathprof_report::verify::verify(&paths, &edges)?;
            print(&report::verify::text(&verification))?;
            Ok(if verification.matched() {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            })
        }
        Command::Predict { inputs } => {
            let loaded = load(&inputs.map, &inputs.profiles)?;
            print(&report::predict::report(&loaded)?)
        }
        Command::Diff { map, a, b } => {
            let la = load(&map, &[a])?;
            let lb = load(&map, &[b])?;
            print(&report::diff::report(&la, &lb)?)
        }
        Command::Dot {
            map,
            function,
            profile,
            hot,
            node_limit,
        } => {
            let map_file = report::load::read_map(&map)?;
            let loaded = match profile {
                Some(p) => Some(load(&map, &[p])?),
                None => None,
            };
            let options = report::dot::Options { hot, node_limit };
            let graph = report::dot::render(&map_file, &function, loaded.as_ref(), &options)?;
            if let Some(w) = &graph.warning {
                eprintln!("{w}");
            }
            print(&graph.text)
        }
        Command::Merge { profiles, output } => {
            let file = report::load::read_profiles(&profiles)?;
            pathprof_io::output::write_new(&output, &file.encode())
                .with_context(|| format!("cannot write {}", output.display()))?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Index {
            map,
            inputs,
            weight,
            output,
        } => {
            index(&map, &inputs, &weight, &output)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Info {
            profiles,
            builds,
            format,
        } => {
            let (indexed, profiles): (Vec<PathBuf>, Vec<PathBuf>) = profiles
                .into_iter()
                .partition(|p| pathprof_report::pgo::is_index_file(p));
            let files = profiles
                .into_iter()
                .map(|p| {
                    let file = pathprof_io::profile::read_file(&p)?;
                    Ok((p, file))
                })
                .collect::<Result<Vec<_>>>()?;
            let indexes = indexed
                .iter()
                .map(|p| {
                    Ok(pathprof_report::info::IndexInfo::of(
                        p,
                        &pathprof_report::pgo::read_index(p)?,
                    ))
                })
                .collect::<Result<Vec<_>>>()?;
            match format {
                ReportFormat::Json => {
                    let mut info = pathprof_report::info::info(&files);
                    info.indexes = indexes;
                    print(&(serde_json::to_string_pretty(&info)? + "\n"))
                }
                ReportFormat::Text => {
                    let mut text = report::info::text(&files, builds);
                    for i in &indexes {
                        if !text.is_empty() {
                            text.push('\n');
                        }
                        text.push_str(&report::info::index_text(i));
                    }
                    print(&text)
                }
            }
        }
        Command::Export {
            inputs,
            format,
            output,
            source,
        } => {
            let loaded = load(&inputs.map, &inputs.profiles)?;
            let text = match format {
                ExportFormat::Json => {
                    serde_json::to_string_pretty(&pathprof_report::json::Report::of(&loaded))?
                        + "\n"
                }
                ExportFormat::Lcov => {
                    report::lcov::export(&loaded, &SourceRoot(source.source_root))?
                }
            };
            write_or_print(output.as_deref(), &text)
        }
        Command::Html {
            inputs,
            output,
            source,
        } => {
            let loaded = load(&inputs.map, &inputs.profiles)?;
            report::html::write(&loaded, &output, &SourceRoot(source.source_root))?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Interesting {
            inputs,
            output,
            min_count,
            top_share,
        } => {
            let selection = pathprof_core::ppp::Selection::new(min_count, top_share)?;
            let loaded = load(&inputs.map, &inputs.profiles)?;
            let list = pathprof_report::ppp::interesting(&loaded, &selection)?;
            write_or_print(output.as_deref(), &list.to_json())
        }
        Command::Residual {
            inputs,
            function,
            top,
        } => {
            let loaded = load(&inputs.map, &inputs.profiles)?;
            print(&report::ppp::residual(&loaded, function.as_deref(), top)?)
        }
        Command::PppStats { map } => {
            let map_file = report::load::read_map(&map)?;
            print(&report::ppp::stats(&map_file))
        }
        Command::P3 { command } => p3(command),
        Command::RtPath => print(&format!("{}\n", crate::toolchain::runtime()?.display())),
    }
}

/// `pathprof p3 run` and `pathprof p3 stats`.
fn p3(command: P3Command) -> Result<ExitCode> {
    match command {
        P3Command::Run {
            copies,
            output,
            map,
            launcher,
            hosts,
            command,
        } => crate::p3::run(crate::p3::RunOptions {
            copies,
            output,
            map,
            launcher: crate::p3::launch::Launcher::new(launcher, hosts)?,
            command,
        }),
        P3Command::Stats {
            copies,
            map,
            profile,
            format,
        } => {
            let loaded = load(&[map], &[profile])?;
            let copies: Vec<usize> = copies.into_iter().map(|k| k as usize).collect();
            let stats = pathprof_report::p3::stats(&loaded, &copies)?;
            match format {
                ReportFormat::Json => print(&(serde_json::to_string_pretty(&stats)? + "\n")),
                ReportFormat::Text => print(&report::p3::text(&stats)),
            }
        }
    }
}

/// `pathprof index`: the raw profiles among `inputs` summed and indexed,
/// merged with the indexed ones and the weighted inputs, written to
/// `output` (a new file renamed into place).
fn index(
    maps: &[PathBuf],
    inputs: &[PathBuf],
    weighted: &[(u64, PathBuf)],
    output: &Path,
) -> Result<()> {
    use pathprof_report::pgo;
    if inputs.is_empty() && weighted.is_empty() {
        anyhow::bail!("no profile given: name the .pprof (or .ppdata) files to index");
    }
    let (indexed, raw): (Vec<&PathBuf>, Vec<&PathBuf>) =
        inputs.iter().partition(|p| pgo::is_index_file(p));
    let mut parts = Vec::new();
    if !raw.is_empty() {
        let raw: Vec<PathBuf> = raw.into_iter().cloned().collect();
        parts.push((1, pgo::index_of_profiles(maps, &raw)?));
    }
    for p in indexed {
        parts.push((1, pgo::read_index(p)?));
    }
    for (w, p) in weighted {
        parts.push((*w, pgo::index_of(maps, p)?));
    }
    let refs: Vec<(u64, &pathprof_core::pgo::Index)> = parts.iter().map(|(w, i)| (*w, i)).collect();
    let index = pathprof_core::pgo::Index::merge(&refs);
    pathprof_io::output::write_new(output, &index.to_bytes())
        .with_context(|| format!("cannot write {}", output.display()))
}
