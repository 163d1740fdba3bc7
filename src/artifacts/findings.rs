//! Findings lists with their cap: the first [`FINDINGS_CAP`] items of each
//! list are kept in discovery order, the rest only counted.

use super::model::*;

#[derive(Debug, Default)]
pub(crate) struct FindingsAcc {
    pub findings: Findings,
}

fn push<T>(list: &mut Vec<T>, omitted: &mut u64, item: T) {
    if list.len() < FINDINGS_CAP {
        list.push(item);
    } else {
        *omitted += 1;
    }
}

impl FindingsAcc {
    pub fn observe(&mut self, item: Observation) {
        let f = &mut self.findings;
        push(&mut f.observations, &mut f.omitted.observations, item);
    }
    pub fn relationship(&mut self, item: DerivedRelationship) {
        let f = &mut self.findings;
        push(
            &mut f.derived_relationships,
            &mut f.omitted.derived_relationships,
            item,
        );
    }
    pub fn missing(&mut self, item: MissingLibrary) {
        let f = &mut self.findings;
        push(
            &mut f.missing_libraries,
            &mut f.omitted.missing_libraries,
            item,
        );
    }
    pub fn external(&mut self, item: ExternalLibrary) {
        let f = &mut self.findings;
        push(
            &mut f.external_libraries,
            &mut f.omitted.external_libraries,
            item,
        );
    }
    pub fn signature(&mut self, item: CodeSignature) {
        let f = &mut self.findings;
        push(&mut f.code_signature, &mut f.omitted.code_signature, item);
    }
    pub fn info_plist(&mut self, item: InfoPlistFacts) {
        let f = &mut self.findings;
        push(&mut f.info_plist, &mut f.omitted.info_plist, item);
    }
    pub fn unexplored(&mut self, item: UnexploredBranch) {
        let f = &mut self.findings;
        push(
            &mut f.unexplored_branches,
            &mut f.omitted.unexplored_branches,
            item,
        );
    }
    pub fn refused(&mut self, item: RefusedEntry) {
        let f = &mut self.findings;
        push(&mut f.refused_entries, &mut f.omitted.refused_entries, item);
    }
}
