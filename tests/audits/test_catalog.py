import pytest
import yaml

from audits.catalog import CATALOG_PATH, CatalogError, load, verify
from audits.docs_gen import OUT, generate
from audits.languages import BY_NAME, language_for, load_scanner


def test_catalogue_loads_with_unique_ids_and_python_families():
    cat = load()
    ids = [r.id for r in cat.rules]
    assert len(ids) == len(set(ids))
    for r in cat.for_languages(["python"]):
        assert r.id[:3] in {f"HN{i}" for i in range(1, 8)}


def test_replacements_exist_in_installed_torch():
    assert verify(load()) == []


def test_every_python_match_string_passes_the_byte_prefilter():
    """A rule whose trigger lacks every prefilter token could never fire."""
    lang = BY_NAME["python"]
    for r in load().for_languages(["python"]):
        m = r.match
        words = (
            m.get("names", [])
            + m.get("attributes", [])
            + m.get("identifiers", [])
            + m.get("prefixes", [])
            + m.get("values", [])
            + (m.get("methods", []) if m["type"] == "method" else [])
        )
        for w in words:
            assert lang.may_match(w.encode()), (r.id, w)


def test_selectors_prefix_category_name_and_unknown():
    cat = load()
    assert {r.id for r in cat.select(["HN10"])} >= {"HN101", "HN105"}
    assert all(r.category == "memory" for r in cat.select(["memory"]))
    assert [r.id for r in cat.select(["cuda-synchronize"])] == ["HN105"]
    assert "HN105" not in {r.id for r in cat.select(["HN1"], ["HN105"])}
    with pytest.raises(CatalogError, match="unknown rule selector"):
        cat.select(["HN9"])


def _write(tmp_path, rules):
    p = tmp_path / "c.yaml"
    p.write_text(yaml.safe_dump({"schema": 1, "rules": rules}))
    return p


def test_malformed_catalogues_report_every_problem(tmp_path):
    good = yaml.safe_load(CATALOG_PATH.read_text())["rules"][0]
    bad = [
        dict(good),
        dict(good),
        dict(good, id="HN198", name="Not Kebab", safety="maybe"),
        dict(good, id="HN801", name="x-y"),
        dict(good, id="HN150", name="z", match={"type": "nope"}),
    ]
    with pytest.raises(CatalogError) as e:
        load(_write(tmp_path, bad))
    msg = str(e.value)
    for frag in ("duplicate", "kebab", "safety", "reserved", "match type"):
        assert frag in msg


def test_cpp_entries_are_accepted_and_ignored_by_python(tmp_path):
    good = yaml.safe_load(CATALOG_PATH.read_text())["rules"][0]
    cpp = {
        **good,
        "id": "HN899",
        "name": "cpp-thing",
        "language": "cpp",
        "replacement": None,
        "match": {"whatever": "the cpp scanner decides"},
    }
    cat = load(_write(tmp_path, [good, cpp]))
    assert [r.id for r in cat.for_languages(["python"])] == [good["id"]]


def test_language_registry():
    assert language_for("x.py").name == "python"
    assert language_for("CMakeLists.txt").name == "cmake"
    assert language_for("k.cuh").name == "cpp"
    assert language_for("README.md") is None
    assert load_scanner(BY_NAME["python"]).scan_source


def test_rules_doc_is_up_to_date():
    assert OUT.read_text(encoding="utf-8") == generate(), "run: python -m audits.docs_gen"
