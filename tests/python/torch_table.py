"""Reading a table shaped as torch's key_averages().table() prints it
(and `sonde report --ops`), for the torch tests and tests/gpu's check:
no pytest here, so a script on a GPU machine imports it too."""


def table(text):
    """(headers, [(name, {header: cell})]) of a key_averages()-shaped
    table: the rows between its second and third rules, cells two spaces
    or more apart."""
    lines = text.splitlines()
    rules = [i for i, line in enumerate(lines) if line.startswith("---")]
    split = lambda line: [c.strip() for c in line.strip().split("  ") if c.strip()]
    headers = split(lines[rules[0] + 1])
    rows = []
    for line in lines[rules[1] + 1:rules[2]]:
        cells = split(line)
        rows.append((cells[0], dict(zip(headers, cells))))
    return headers, rows


def microseconds(cell):
    for unit, scale in (("us", 1), ("ms", 1e3), ("s", 1e6)):
        if cell.endswith(unit):
            return float(cell[:-len(unit)]) * scale
    raise ValueError(cell)


def nbytes(cell):
    number, unit = cell.split()
    return float(number) * {"B": 1, "KB": 1024, "MB": 1024 ** 2, "GB": 1024 ** 3}[unit]
