"""Templates written by an LLM through any generator: a scripted generator returns good and garbage output."""

from __future__ import annotations

import re

import pytest
import yaml
from pydantic import BaseModel, ConfigDict, Field

from ragassay import hookimpl
from ragassay.components import Generation, Generator
from ragassay.errors import DatasetError
from ragassay.plugin_manager import load_plugins
from ragassay.plugins.grammar.llm_templates import criteria_problems, response_lines

from grammar_helpers import make_db, source

GOOD_SQL = "SELECT City FROM Customer WHERE Name = '[Customer.Name]';"
SQL_REPLY = f"""```sql
1. {GOOD_SQL}
2. SELECT * FROM Customer WHERE Name = '[Customer.Name]'
- DELETE FROM Customer WHERE Name = '[Customer.Name]'
SELECT Name FROM Customer WHERE Name = '[Customer.Name]'
SELECT Town FROM Customer WHERE Name = '[Customer.Name]'
SELECT City FROM Customer WHERE Name = '[Client.Name]'
SELECT  city FROM Customer WHERE Name = '[Customer.Name]'
Here are some great templates for you!
```"""


class ScriptedOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")
    mode: str = Field("good", description="good | garbage | fail")


class ScriptedLLM(Generator):
    """Plays an LLM: SQL templates for the Table 3 prompt, text templates for the g_t prompt."""

    name = "scripted"
    Options = ScriptedOptions
    prompts: list[str] = []

    async def generate(self, request):
        prompt = request.messages[0]["content"]
        type(self).prompts.append(prompt)
        if self.options.mode == "fail":
            raise ConnectionError("provider unreachable")
        if self.options.mode == "garbage":
            return Generation(text="I am sorry, I cannot help with that.\n\n<html>500</html>")
        if "SQL query Template Generator" in prompt:
            return Generation(text=SQL_REPLY if "Customer(" in prompt else "")
        placeholder = re.search(r"\[\w+\.\w+\]", prompt.split("##SQL TEMPLATE##")[1]).group(0)
        if "Long:" in prompt:
            return Generation(
                text=f"I am planning a visit next month and would very much like to know in which "
                f"city the customer {placeholder} is living at the moment, please?\n"
                f"Where is {placeholder}?"
            )
        return Generation(
            text=f"Where does {placeholder} live?\n- Where does {placeholder} live?\n"
            "What is the city?\nSELECT City FROM Customer WHERE Name = '[Customer.Name]'"
        )


class Plugin:
    @hookimpl
    def register_generators(self, register):
        register(ScriptedLLM)


@pytest.fixture
def registry():
    ScriptedLLM.prompts = []
    return load_plugins([("script", Plugin())]).registry


def test_generated_templates_are_validated_saved_for_review_and_used(tmp_path, registry):
    make_db(tmp_path / "shop.db")
    src = source(tmp_path, registry, generate={"generator": "script/scripted", "tables": ["Customer"]})
    samples = list(src.samples())
    saved = yaml.safe_load((tmp_path / "templates.yaml").read_text(encoding="utf-8"))
    assert "Review before use" in (tmp_path / "templates.yaml").read_text(encoding="utf-8")
    assert [t["sql"] for t in saved["templates"]] == [GOOD_SQL.rstrip(";")]
    template = saved["templates"][0]
    assert template["id"] == "customer_1" and template["table"] == "Customer"
    assert [(t["id"], t["attributes"]) for t in template["texts"]] == [
        ("short1", {"query_length": "short"}),
        ("long1", {"query_length": "long"}),
    ]
    reasons = {r["text"]: r["reason"] for r in saved["rejected"]}
    assert "selects '*'" in reasons["SELECT * FROM Customer WHERE Name = '[Customer.Name]'"]
    assert "only read-only SELECT" in reasons["DELETE FROM Customer WHERE Name = '[Customer.Name]'"]
    assert (
        "projects name, which the predicate fixes"
        in reasons["SELECT Name FROM Customer WHERE Name = '[Customer.Name]'"]
    )
    assert "no such column: Town" in reasons["SELECT Town FROM Customer WHERE Name = '[Customer.Name]'"]
    assert "no table 'Client'" in reasons["SELECT City FROM Customer WHERE Name = '[Client.Name]'"]
    assert "duplicates template customer_1" in reasons["SELECT  city FROM Customer WHERE Name = '[Customer.Name]'"]
    assert reasons["Here are some great templates for you!"] == "not a SQL template"
    assert "duplicates another text template" in reasons["Where does [Customer.Name] live?"]
    assert "does not mention [customer.name]" in reasons["What is the city?"]
    assert (
        reasons["SELECT City FROM Customer WHERE Name = '[Customer.Name]'"] == "is SQL, not a natural-language question"
    )
    assert "too short for 'long'" in reasons["Where is [Customer.Name]?"]
    assert len(samples) == 2 * 4  # 4 single-answer names x 2 text templates
    assert any("##DATA SCHEMA##\nCustomer(CustomerID INTEGER PRIMARY KEY" in p for p in ScriptedLLM.prompts)
    before = len(ScriptedLLM.prompts)
    list(source(tmp_path, registry, generate={"generator": "script/scripted"}).samples())
    assert len(ScriptedLLM.prompts) == before  # the saved file is reused: no new LLM call


def test_garbage_from_the_llm_is_recorded_and_reported(tmp_path, registry):
    make_db(tmp_path / "shop.db")
    src = source(
        tmp_path, registry, generate={"generator": {"name": "script/scripted", "options": {"mode": "garbage"}}}
    )
    with pytest.raises(DatasetError, match="the LLM wrote no acceptable template; the rejections and their reasons"):
        list(src.samples())
    saved = yaml.safe_load((tmp_path / "templates.yaml").read_text(encoding="utf-8"))
    assert saved["templates"] == [] and {r["reason"] for r in saved["rejected"]} == {"not a SQL template"}


def test_a_failing_generator_gives_one_clear_error(tmp_path, registry):
    make_db(tmp_path / "shop.db")
    src = source(tmp_path, registry, generate={"generator": {"name": "script/scripted", "options": {"mode": "fail"}}})
    with pytest.raises(DatasetError, match="generator 'script/scripted' failed: ConnectionError: provider unreachable"):
        list(src.samples())
    assert not (tmp_path / "templates.yaml").exists()


def test_response_lines_strip_fences_bullets_and_numbers():
    assert response_lines("```sql\n1. SELECT a\n- SELECT b\n* `SELECT c`\n\n##RESPONSE_END##\n```") == [
        "SELECT a",
        "SELECT b",
        "SELECT c",
    ]


def test_table3_criteria_checks():
    assert criteria_problems("SELECT Industry FROM Company WHERE Name = '[Company.Name]'") == []
    assert criteria_problems("SELECT Industry FROM Company HAVING Name = '[Company.Name]'") == [
        "has no placeholder in the WHERE clause"
    ]
