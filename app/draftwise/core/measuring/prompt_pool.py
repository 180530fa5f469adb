"""The built-in prompts a measurement runs: chat requests that stand for real use.

Sixteen requests, two of each kind of work people give a local model (`KINDS`): a chat
question, writing code, editing code (a given file repeated with a change), summarising a
given text, translating, extracting JSON from a text, a multi-turn conversation carrying a
long context, and an agent's request with tool definitions shaped like Claude Code's. Each is
a chat body (messages, and tools for the agent), sent through the model's own chat template
(the engine's `/apply-template`), as an app's request reaches the engine.

Drafting pays differently on each kind: n-gram drafting on text that repeats its input (the
edit, the extraction, the summary's source), a draft model on fluent prose. The quick
measurement runs the first of each kind (`MEASURED`); the second (`HELD_OUT`) is what
bench/generalize.py checks the choice on, prompts the measurement never saw.
"""

from __future__ import annotations

from typing import Any

_FILE = '''import csv
from dataclasses import dataclass
from pathlib import Path


@dataclass
class Order:
    customer: str
    item: str
    quantity: int
    price: float


def read_orders(path: Path) -> list[Order]:
    """Every order in a CSV file with a header row."""
    with path.open(newline="") as f:
        return [Order(row["customer"], row["item"], int(row["quantity"]), float(row["price"]))
                for row in csv.DictReader(f)]


def total_by_customer(orders: list[Order]) -> dict[str, float]:
    totals: dict[str, float] = {}
    for order in orders:
        totals[order.customer] = totals.get(order.customer, 0.0) + order.quantity * order.price
    return totals


def main() -> None:
    orders = read_orders(Path("orders.csv"))
    for customer, total in sorted(total_by_customer(orders).items()):
        print(f"{customer}: {total:.2f}")


if __name__ == "__main__":
    main()
'''

_FILE_2 = '''function parseDuration(text) {
  // "1h 30m", "45m", "2h" -> minutes
  const parts = text.trim().split(/\\s+/);
  let minutes = 0;
  for (const part of parts) {
    const value = parseInt(part, 10);
    if (part.endsWith("h")) {
      minutes += value * 60;
    } else if (part.endsWith("m")) {
      minutes += value;
    } else {
      throw new Error("unknown unit in " + part);
    }
  }
  return minutes;
}

function formatDuration(minutes) {
  const hours = Math.floor(minutes / 60);
  const rest = minutes % 60;
  if (hours === 0) return rest + "m";
  if (rest === 0) return hours + "h";
  return hours + "h " + rest + "m";
}

module.exports = { parseDuration, formatDuration };
'''

_REPORT = (
    "The town council met on Tuesday to review the new bus timetable. Since March, buses on "
    "line 4 have run every twelve minutes instead of every twenty, and the council's survey of "
    "1,200 riders found that 68 percent now wait less than ten minutes. Complaints fell by a third. "
    "However, the extra buses cost 410,000 euros a year, and the council's budget for 2027 has "
    "room for only 300,000. Three options were discussed: raising the single fare from 1.80 to "
    "2.10 euros, cutting the evening service after 21:00 back to every twenty minutes, or asking "
    "the regional government for a grant. The transport committee will bring a costed proposal "
    "to the next meeting on 14 January, and riders can comment on the options online until then."
)

_REPORT_2 = (
    "Our team spent the last quarter moving the support site to the new help-desk software. "
    "Tickets are now answered in 5.2 hours on average, down from 9.8, and the share solved in the "
    "first reply rose from 41 to 57 percent. Two problems remain: the search still misses articles "
    "written before 2024, because their tags were not imported, and the chat widget does not load on "
    "older tablets. The import of the old tags is planned for February; for the widget, the vendor "
    "has promised a fix in its April release. Until then, agents are asked to link old articles by "
    "hand and to offer e-mail to customers whose chat does not open."
)

_INVOICE = (
    "Hi Sam, thanks for the order! Confirming: 3 x Oak bookshelf (SKU OB-220) at 149.00 each, "
    "1 x Reading lamp (SKU RL-15) at 39.50, delivery to 12 Mill Lane, Bristol BS1 4QT on Friday "
    "9 January between 8:00 and 12:00. Payment by card, order number 55812. Best, Priya from Woodline"
)

_INVOICE_2 = (
    "Booking confirmed for Ms. Elena Ruiz: Hotel Alba, Calle Mayor 7, Madrid. Check-in 2 March, "
    "check-out 5 March (3 nights), one double room with breakfast, 118 euros per night, total 354 "
    "euros, paid in advance. Reference HX-40917. Late arrival noted (around 23:00)."
)

_TOOLS: list[dict[str, Any]] = [
    {"type": "function", "function": {
        "name": "Read", "description": "Read a file from the local filesystem. Returns its lines, numbered.",
        "parameters": {"type": "object", "properties": {
            "file_path": {"type": "string", "description": "The absolute path of the file to read"},
            "offset": {"type": "integer", "description": "The line to start reading at"},
            "limit": {"type": "integer", "description": "The number of lines to read"}},
            "required": ["file_path"]}}},
    {"type": "function", "function": {
        "name": "Edit", "description": "Replace an exact string in a file with another string.",
        "parameters": {"type": "object", "properties": {
            "file_path": {"type": "string", "description": "The absolute path of the file to modify"},
            "old_string": {"type": "string", "description": "The text to replace, exactly as in the file"},
            "new_string": {"type": "string", "description": "The text to replace it with"}},
            "required": ["file_path", "old_string", "new_string"]}}},
    {"type": "function", "function": {
        "name": "Bash", "description": "Run a command in a shell and return its output.",
        "parameters": {"type": "object", "properties": {
            "command": {"type": "string", "description": "The command to run"},
            "timeout": {"type": "integer", "description": "Milliseconds before the command is stopped"}},
            "required": ["command"]}}},
    {"type": "function", "function": {
        "name": "Grep", "description": "Search file contents with a regular expression.",
        "parameters": {"type": "object", "properties": {
            "pattern": {"type": "string", "description": "The regular expression to search for"},
            "path": {"type": "string", "description": "The file or folder to search in"}},
            "required": ["pattern"]}}},
]

_AGENT_SYSTEM = (
    "You are an interactive command-line tool that helps users with software engineering tasks. "
    "Use the tools available to you to read, search and change files. Be concise. When you change "
    "code, keep the project's style, and explain the change in one or two sentences."
)


def _conversation(turns: list[tuple[str, str]], last: str) -> list[dict[str, str]]:
    out: list[dict[str, str]] = []
    for user, assistant in turns:
        out += [{"role": "user", "content": user}, {"role": "assistant", "content": assistant}]
    return [*out, {"role": "user", "content": last}]


_TRIP = [
    ("I'm planning a week in Portugal in May with my partner. We like food, walking and old towns, "
     "and we don't want to drive. Where should we base ourselves?",
     "Two bases work well without a car. Spend four nights in Lisbon: the Alfama and Graça "
     "neighbourhoods are walkable, and Sintra is 40 minutes away by train for a day of palaces and "
     "forest paths. Then take the train to Porto (about three hours) for three nights: the Ribeira "
     "waterfront, the port lodges across the river in Gaia, and a day trip up the Douro valley by train "
     "to Pinhão. Both cities have excellent food markets: Mercado da Ribeira in Lisbon and Bolhão in Porto."),
    ("Sounds good. What should we eat in each city, and roughly what will meals cost?",
     "In Lisbon, try bacalhau à Brás (salt cod with egg and potato), grilled sardines if you find them "
     "early in the season, and pastéis de nata from Manteigaria. In Porto, the francesinha is the famous "
     "heavy sandwich, and tripas à moda do Porto is the local stew. A lunch menu of the day (prato do dia) "
     "costs 10 to 14 euros with a drink; dinner in a good tasca is 25 to 35 euros a person with wine."),
    ("And how do we get from the airport to the centre in Lisbon, and later from Porto back to Lisbon "
     "airport for our flight home?",
     "From Lisbon airport the red metro line reaches the centre in about 25 minutes; change at Alameda "
     "or São Sebastião. A single ticket needs a rechargeable Viva Viagem card (0.50 euros) and costs "
     "1.85 euros. For the way home, take the Alfa Pendular train from Porto Campanhã to Lisboa Oriente "
     "(2 h 50 min, from about 30 euros if booked early), then the metro red line two stops to the airport."),
]

_GARDEN = [
    ("I have a small north-facing balcony, about 2 by 3 metres, in a city with cold winters. What can "
     "I grow there?",
     "North-facing means little direct sun, so choose plants that like shade: ferns, hostas, heuchera "
     "and hydrangeas for looks; mint, parsley, chives and lettuce for eating. Use containers at least "
     "30 cm deep, and group them so they shelter each other from the wind."),
    ("Which of those survive the winter outside?",
     "Hostas, heuchera, ferns such as the male fern, chives and mint are hardy and come back in spring; "
     "wrap their pots in fleece or bubble wrap so the roots do not freeze solid. Lettuce and parsley are "
     "best sown again each spring. Hydrangeas survive if the pot is large and sheltered from wind."),
    ("How often should I water them in summer, and do they need fertiliser?",
     "Pots dry out faster than beds even in shade: check every two or three days in summer and water "
     "when the top two centimetres feel dry, early in the morning. Feed every two weeks from May to "
     "August with a balanced liquid fertiliser at half strength; herbs need less, or they lose flavour."),
]

# (kind, chat body): the first of each kind is measured, the second held out.
KINDS = ("chat", "write code", "edit code", "summarise", "translate", "extract JSON", "long conversation",
         "agent")

_MEASURED: dict[str, dict[str, Any]] = {
    "chat": {"messages": [{"role": "user", "content":
        "What should I pack for a three-day hiking trip in the mountains in autumn?"}]},
    "write code": {"messages": [{"role": "user", "content":
        "Write a Python function that returns the n-th Fibonacci number iteratively, with a docstring "
        "and type hints, and a short example of its use."}]},
    "edit code": {"messages": [{"role": "user", "content":
        "Rename the function total_by_customer to totals_per_customer everywhere in this file and "
        "return the whole file, changed, in one code block.\n\n```python\n" + _FILE + "```"}]},
    "summarise": {"messages": [{"role": "user", "content":
        "Summarise this report in three sentences for a local newsletter.\n\n" + _REPORT}]},
    "translate": {"messages": [{"role": "user", "content":
        "Translate into French:\n\nThank you for your message. The workshop on Saturday starts at ten "
        "o'clock in the library on the first floor. Please bring a laptop and your charger; coffee and "
        "lunch are provided. If you cannot come, tell us by Thursday so that someone on the waiting "
        "list can take your place."}]},
    "extract JSON": {"messages": [{"role": "user", "content":
        "Extract the order from this message as JSON with the keys customer, order_number, items "
        "(each with sku, name, quantity, unit_price), delivery_address and delivery_date. Answer with "
        "the JSON only.\n\n" + _INVOICE}]},
    "long conversation": {"messages": _conversation(_TRIP,
        "Put everything together as a day-by-day plan for the seven days, with where we sleep, what we "
        "see and one place to eat each day.")},
    "agent": {"tools": _TOOLS, "messages": [
        {"role": "system", "content": _AGENT_SYSTEM},
        {"role": "user", "content": "The file /home/me/shop/orders.py is below. read_orders crashes when "
         "the quantity column is empty. Fix it so such rows count as quantity 0, and show the edit.\n\n"
         "```python\n" + _FILE + "```"}]},
}

_HELD_OUT: dict[str, dict[str, Any]] = {
    "chat": {"messages": [{"role": "user", "content":
        "My sourdough bread comes out dense and flat. What are the most likely reasons, and what should "
        "I change first?"}]},
    "write code": {"messages": [{"role": "user", "content":
        "Write a JavaScript function that checks whether a string is a valid ISO date (YYYY-MM-DD), "
        "including leap years, with comments and three example calls."}]},
    "edit code": {"messages": [{"role": "user", "content":
        "Change formatDuration in this file so it returns \"0m\" for zero minutes and throws for negative "
        "input. Return the whole file, changed, in one code block.\n\n```javascript\n" + _FILE_2 + "```"}]},
    "summarise": {"messages": [{"role": "user", "content":
        "Summarise this update for the company's monthly e-mail in four bullet points.\n\n" + _REPORT_2}]},
    "translate": {"messages": [{"role": "user", "content":
        "Translate into German:\n\nThe heating in the building will be switched off on Monday from nine "
        "in the morning until about three in the afternoon while the boiler is repaired. We are sorry "
        "for the trouble. If you need help during that time, call the caretaker on the number in the "
        "entrance hall."}]},
    "extract JSON": {"messages": [{"role": "user", "content":
        "Turn this booking into JSON with the keys guest, hotel, address, check_in, check_out, nights, "
        "room, price_per_night, total, reference and notes. Answer with the JSON only.\n\n" + _INVOICE_2}]},
    "long conversation": {"messages": _conversation(_GARDEN,
        "Write me a planting plan for the balcony month by month, from March to October, using what we "
        "discussed.")},
    "agent": {"tools": _TOOLS, "messages": [
        {"role": "system", "content": _AGENT_SYSTEM},
        {"role": "user", "content": "In /home/me/app/duration.js below, parseDuration accepts \"1h30m\" "
         "without a space wrongly. Make it accept both \"1h30m\" and \"1h 30m\", add a test file "
         "duration.test.js with Node's built-in test runner, and show both files.\n\n```javascript\n"
         + _FILE_2 + "```"}]},
}

# One paragraph the settings stage repeats into its long prompt (core/measuring/prompts.py).
NOTE = ("The quarterly meeting has been rescheduled to Thursday at 10:00 owing to the unavailability of the "
        "main conference room. Attendees are requested to confirm their participation by Wednesday noon and "
        "to bring the revised budget figures.")

MEASURED: tuple[tuple[str, dict[str, Any]], ...] = tuple((k, _MEASURED[k]) for k in KINDS)
HELD_OUT: tuple[tuple[str, dict[str, Any]], ...] = tuple((k, _HELD_OUT[k]) for k in KINDS)
