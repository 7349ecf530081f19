"""The prompts of GRAMMAR (seeds/000): the SQL template generator (Table 3), the text template generator
(section 3.2; the paper does not print its prompt, this one follows Table 3's structure), and the
reference-based judge ("Ours", Table 6).

The paper's typographic quotes are written as ASCII quotes, so that generated SQL uses real string quotes.
"""

from __future__ import annotations

import re

from ragassay.plugins.judges.correctness import JUDGE_PROMPT as _JUDGE_PROMPT

#: Table 3: "A prompt template designed to guide the LLM in functioning as a controllable SQL template
#: generator". {SPECIFIC_REQUIREMENTS} and {GIVEN_SCHEMA} are replaced (plain replacement, not str.format).
SQL_TEMPLATE_PROMPT = """\
You are a SQL query Template Generator: Generate ACCEPTABLE SQL query templates with placeholders according to \
the give data schema and requirements. A simple example of an acceptable SQL query template is:
SELECT Industry FROM Company WHERE Name = '[Company.Name]';
You must follow the basic criteria below except for other requirements:
##CRITERIA##
- The placeholder format should be a combination of a table name and a column name, enclosed within square \
brackets, e.g., '[User.Name]'.
- Use only 'SELECT' queries.
- Select specific column(s) instead of using '*'. Avoid projecting attributes that appear in the predicate.
- The selected and condition columns in the query MUST BE MEANINGFUL and DESCRIPTIVE to ensure the queries are \
easily understood by non-technical users.
- Avoid using technical column names that don't clearly signify the nature of the entities or objects involved, \
e.g., column for semantically void record identifiers.
- Do not create redundant or semantically duplicated queries when translated into natural language.
- Each query must contain at least one parameter placeholder in the WHERE clause.
- Ensure the query yields a specific and singular answer to avoid multiplicity issues, thus facilitating accurate \
chatbot evaluation.
{SPECIFIC_REQUIREMENTS}
- If no acceptable SQL template can be generated with the given table and column information, do not generate \
any text.
##RESPONSE FORMAT##
- Output each SQL template as a single line, without any prefix or suffix.
- Do not include any other text in your response, even something like ##RESPONSE_END##.
##DATA SCHEMA##
{GIVEN_SCHEMA}
##RESPONSE_START##
"""

#: g_t (section 3.2): SQL template -> text templates meeting one linguistic criterion.
TEXT_TEMPLATE_PROMPT = """\
You are a Text Template Generator: Generate natural-language question templates that ask exactly what the SQL \
query template below returns, as a non-technical user would ask a chatbot.
##CRITERIA##
- Keep every placeholder of the SQL template exactly as written (e.g. [Company.Name]), each exactly once, and \
add no other placeholder.
- The question must have the same meaning as the SQL query template: ask for the selected column(s) given the \
placeholder value(s).
- Do not mention SQL, tables or technical column names.
- Linguistic requirement: {CRITERION}
- Generate {N} different templates.
##RESPONSE FORMAT##
- Output each text template as a single line, without any prefix or suffix.
- Do not include any other text in your response.
##SQL TEMPLATE##
{SQL_TEMPLATE}
##RESPONSE_START##
"""

#: Linguistic criteria C_t: name -> (attribute it sets, instruction given to the generator).
TEXT_CRITERIA: dict[str, tuple[str, str]] = {
    "short": ("query_length", "Short: a brief query of at most 12 words."),
    "long": (
        "query_length",
        "Long: a verbose query of at least 25 words, with polite framing and context about "
        "why the information is needed.",
    ),
    "interrogative": ("sentence_type", "Interrogative: phrased as a question that ends with a question mark."),
    "directive": (
        "sentence_type",
        "Directive: phrased as an instruction or request (e.g. 'Tell me ...', 'Find ...'), not as a question.",
    ),
    "formal": ("register", "Formal: a formal, professional register."),
    "casual": ("register", "Casual: a casual, conversational register."),
}

#: Table 6, "Ours": the reference-based correctness judge (defined with the judge that uses it).
JUDGE_PROMPT = _JUDGE_PROMPT


def fill(template: str, values: dict[str, str]) -> str:
    """Replace ``{NAME}`` fields in one pass (text inside the values is never re-substituted)."""
    pattern = re.compile(r"\{(" + "|".join(map(re.escape, values)) + r")\}")
    return pattern.sub(lambda m: values[m.group(1)], template)


def sql_prompt(schema: str, requirements: list[str]) -> str:
    """Table 3 filled in: one requirement per line (or none)."""
    specific = "\n".join(f"- {r}" for r in requirements)
    template = SQL_TEMPLATE_PROMPT if specific else SQL_TEMPLATE_PROMPT.replace("{SPECIFIC_REQUIREMENTS}\n", "")
    return fill(template, {"SPECIFIC_REQUIREMENTS": specific, "GIVEN_SCHEMA": schema})


def text_prompt(sql_template: str, criterion: str, n: int) -> str:
    """The g_t prompt for one SQL template and one linguistic criterion."""
    return fill(
        TEXT_TEMPLATE_PROMPT, {"CRITERION": TEXT_CRITERIA[criterion][1], "N": str(n), "SQL_TEMPLATE": sql_template}
    )


def judge_prompt(query: str, true_answer: str, given_response: str) -> str:
    """Table 6 "Ours" filled in."""
    return fill(JUDGE_PROMPT, {"query": query, "true_answer": true_answer, "given_response": given_response})
