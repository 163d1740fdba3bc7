//! `rea procedures FILE [--document D] [--symbols-only] [--found-by]`: the
//! CLI twin of `list_procedures`.

use std::io::{BufWriter, Write};
use std::path::Path;
use std::process::ExitCode;

use rea::artifacts::{self, ArtifactFormat};
use rea::providers::native::NativeImage;
use rea::session::{ReadRoots, admission};

use super::CliError;

/// What `rea procedures` lists and how.
pub struct Listing {
    /// Only what the symbol tables name (what `nm` sees).
    pub symbols_only: bool,
    /// How each procedure was found, after its address.
    pub found_by: bool,
}

pub fn run(file: &Path, document: Option<&str>, listing: Listing) -> Result<ExitCode, CliError> {
    let (image, index) = open_document(file, document)?;
    let inventory = if listing.symbols_only {
        image.symbol_inventory(index).map(std::sync::Arc::new)
    } else {
        image.inventory(index)
    }
    .map_err(|e| CliError::failed("inventory_failed", e.to_string()))?;
    let stdout = std::io::stdout();
    let mut out = BufWriter::with_capacity(1 << 16, stdout.lock());
    let mut head = String::with_capacity(64);
    for p in &inventory.procedures {
        use std::fmt::Write as _;
        head.clear();
        let _ = write!(head, "{:#x}", p.address);
        if listing.found_by {
            let _ = write!(head, " {}", p.sources.names().join(","));
            if let Some(parent) = p.part_of {
                let _ = write!(head, " fragment_of={parent:#x}");
            }
        }
        let written = match &p.name {
            None => writeln!(out, "{head}"),
            Some(name) => writeln!(out, "{head} {name}").and_then(|_| {
                p.aliases
                    .iter()
                    .try_for_each(|alias| writeln!(out, "{head} {alias}"))
            }),
        };
        if let Err(e) = written {
            // A closed pipe (`| head`) is a normal way to stop reading.
            if e.kind() == std::io::ErrorKind::BrokenPipe {
                return Ok(ExitCode::SUCCESS);
            }
            return Err(CliError::failed(
                "write_failed",
                format!("cannot write: {e}"),
            ));
        }
    }
    if let Err(e) = out.flush()
        && e.kind() != std::io::ErrorKind::BrokenPipe
    {
        return Err(CliError::failed(
            "write_failed",
            format!("cannot write: {e}"),
        ));
    }
    if inventory.truncated {
        eprintln!("rea: inventory truncated at its cap; higher addresses were not listed");
    }
    Ok(ExitCode::SUCCESS)
}

/// Admits and opens `file` as `open_binary` would (no read-root
/// confinement on the command line) and resolves `document` (default: the
/// first), for the CLI commands that read one document.
pub(super) fn open_document(
    file: &Path,
    document: Option<&str>,
) -> Result<(NativeImage, usize), CliError> {
    let admitted = admission::admit(file, &ReadRoots::default()).map_err(CliError::tool)?;
    // An archive is an artifact target, as `rea doctor` says: it has no
    // code documents to list.
    if admitted.bundle.is_none()
        && let Ok(Some(format @ (ArtifactFormat::Zip | ArtifactFormat::Ar | ArtifactFormat::Asar))) =
            artifacts::sniff(&admitted.file)
    {
        return Err(CliError::failed(
            "no_code_documents",
            format!(
                "{} is a {} archive: it opens as an artifact target, with no code documents. \
                 List its contents with inspect_artifact (after open_binary), or name one of its \
                 binaries.",
                file.display(),
                format.as_str()
            ),
        ));
    }
    let image =
        NativeImage::from_file(&admitted.file, &admitted.file_path).map_err(CliError::tool)?;
    let index = match document {
        Some(d) => image
            .document_index(d)
            .map_err(|e| CliError::Usage(e.to_string()))?,
        None => 0,
    };
    Ok((image, index))
}
