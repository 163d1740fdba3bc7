use super::*;

fn sample() -> Vec<u8> {
    let inner = zip(&[z("x.txt", b"x")]);
    zip(&[z("a.txt", b"abc"), z("in.zip", &inner), z("dir/", b"")])
}

#[test]
fn ids_are_stable_and_independent_of_location() {
    let b = sample();
    let dir = tempfile::tempdir().unwrap();
    let p1 = dir.path().join("one.zip");
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    let p2 = dir.path().join("sub/other-name.zip");
    std::fs::write(&p1, &b).unwrap();
    std::fs::write(&p2, &b).unwrap();
    let a = inspect(&p1, ArtifactFormat::Zip, &Limits::default()).unwrap();
    let c = inspect(&p2, ArtifactFormat::Zip, &Limits::default()).unwrap();
    let m = inspect_bytes(&b, ArtifactFormat::Zip, &Limits::default()).unwrap();
    assert_eq!(a, c);
    assert_eq!(a, m);
    assert!(a.manifest.manifest_id.starts_with("agm_") && a.manifest.manifest_id.len() == 68);
    for o in &a.occurrences {
        assert!(o.occurrence_id.starts_with("occ_") && o.occurrence_id.len() == 68);
    }
    for e in &a.edges {
        assert!(e.edge_id.starts_with("edge_") && e.edge_id.len() == 69);
    }
    for n in &a.nodes {
        assert_eq!(n.node_id, format!("art_{}", n.sha256));
    }
    // The same entry content at the same place in an artifact gives the same id.
    let other = zip(&[z("a.txt", b"abc")]);
    let o = inspect_bytes(&other, ArtifactFormat::Zip, &Limits::default()).unwrap();
    assert_eq!(
        o.nodes
            .iter()
            .find(|n| n.sha256 == sha256_hex(b"abc"))
            .map(|n| &n.node_id),
        a.nodes
            .iter()
            .find(|n| n.sha256 == sha256_hex(b"abc"))
            .map(|n| &n.node_id)
    );
}

#[test]
fn validate_catches_tampering() {
    let good = bytes(ArtifactFormat::Zip, &sample());
    let round: Inspection = serde_json::from_value(serde_json::to_value(&good).unwrap()).unwrap();
    round.validate().unwrap();

    let mut t = good.clone();
    t.occurrences[1].logical_path = "renamed.txt".into();
    assert!(matches!(
        t.validate().unwrap_err(),
        ArtifactError::Invalid { .. }
    ));

    let mut t = good.clone();
    t.occurrences[1].occurrence_id = t.occurrences[1]
        .expected_id()
        .replace("occ_", "occ_0")
        .split_at(68)
        .0
        .to_string();
    assert!(t.validate().is_err());

    let mut t = good.clone();
    let last = t.nodes.len() - 1;
    t.nodes[last].size += 1;
    assert!(
        t.validate()
            .unwrap_err()
            .to_string()
            .contains("graph_sha256")
    );

    let mut t = good.clone();
    t.edges.pop();
    assert!(t.validate().is_err());

    let mut t = good.clone();
    t.manifest.root_format = ArtifactFormat::Ar;
    assert!(
        t.validate()
            .unwrap_err()
            .to_string()
            .contains("manifest_id")
    );

    let mut t = good.clone();
    t.occurrences[1].logical_path = "../x".into();
    t.occurrences[1].occurrence_id = t.occurrences[1].expected_id();
    assert!(
        t.validate()
            .unwrap_err()
            .to_string()
            .contains("logical path")
    );

    let mut t = good;
    t.edges[0].to = "occ_missing".into();
    t.edges[0].edge_id = edge_id(t.edges[0].kind, &t.edges[0].from, &t.edges[0].to, None);
    assert!(t.validate().is_err());
}

#[test]
fn serde_shape_is_strict_and_kebab_cased() {
    let i = bytes(ArtifactFormat::Zip, &sample());
    let v = serde_json::to_value(&i).unwrap();
    assert_eq!(v["manifest"]["root_format"], "zip");
    assert_eq!(v["coverage"]["status"], "complete");
    assert_eq!(v["occurrences"][0]["hash_status"], "verified");
    let mut extra = v.clone();
    extra["manifest"]["surprise"] = serde_json::json!(1);
    assert!(serde_json::from_value::<Inspection>(extra).is_err());
}

#[test]
fn validate_checks_finding_references_and_display_paths_agree() {
    let good = bytes(ArtifactFormat::Zip, &sample());
    let one_by_one: Vec<String> = good
        .occurrences
        .iter()
        .map(|o| good.display_path(o))
        .collect();
    assert_eq!(good.display_paths(), one_by_one);
    assert!(one_by_one.contains(&"in.zip!/x.txt".to_string()));
    let mut t = good;
    t.findings.observations.push(Observation {
        kind: ObservationKind::Note,
        occurrence_id: Some("occ_nowhere".into()),
        message: "x".into(),
    });
    assert!(
        t.validate()
            .unwrap_err()
            .to_string()
            .contains("occ_nowhere")
    );
}
