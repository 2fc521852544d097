"""Setup masters: currencies, branches, trees, groups, customers, suppliers, items, prices."""

from __future__ import annotations

from dataclasses import dataclass

from demo_erp.seed import names
from demo_erp.seed.accounts import create_company, fiscal_years
from demo_erp.seed.base import BranchInfo, CompanyInfo, Seeder

COMPANIES = (
    CompanyInfo(
        "Savanna Trading Ltd",
        "ST",
        "KES",
        "Kenya",
        16.0,
        129.0,
        ["Nairobi", "Kisumu", "Mombasa", "Nakuru"],
    ),
    CompanyInfo(
        "Harbor Goods Inc",
        "HG",
        "USD",
        "United States",
        8.0,
        1.0,
        ["New York", "Chicago", "Houston"],
    ),
)
# (branch, territory, city, share of its company's business)
BRANCHES = {
    "Nairobi": ("Nairobi", "Nairobi", 0.4),
    "Kisumu": ("Western", "Kisumu", 0.2),
    "Mombasa": ("Coast", "Mombasa", 0.25),
    "Nakuru": ("Rift Valley", "Nakuru", 0.15),
    "New York": ("East", "New York", 0.45),
    "Chicago": ("Midwest", "Chicago", 0.3),
    "Houston": ("South", "Houston", 0.25),
}
TERRITORIES = (
    ("Kenya", "All Territories", 1),
    ("Nairobi", "Kenya", 0),
    ("Western", "Kenya", 0),
    ("Coast", "Kenya", 0),
    ("Rift Valley", "Kenya", 0),
    ("United States", "All Territories", 1),
    ("East", "United States", 0),
    ("Midwest", "United States", 0),
    ("South", "United States", 0),
)
CUSTOMER_GROUPS = ("Wholesale", "Retail", "Contractors", "Government", "Individual")
SUPPLIER_GROUPS = ("Raw Material", "Hardware", "Electrical", "Distributor", "Services", "Local")
UOMS = (
    ("Nos", 1),
    ("Box", 1),
    ("Pair", 1),
    ("Set", 1),
    ("Meter", 0),
    ("Litre", 0),
    ("Kg", 0),
    ("Hour", 0),
)
MODES_OF_PAYMENT = (
    ("Cash", "Cash"),
    ("Bank Draft", "Bank"),
    ("Wire Transfer", "Bank"),
    ("Cheque", "Bank"),
    ("M-Pesa", "Phone"),
    ("Credit Card", "Bank"),
)
CURRENCIES = (("KES", "KSh"), ("USD", "$"), ("EUR", "€"))
SERVICE_ITEMS = (
    ("SVC-DELIVERY", "Delivery Charge", 15.0),
    ("SVC-INSTALL", "Installation Service", 45.0),
    ("SVC-CONSULT", "Consulting Hour", 60.0),
)


@dataclass
class ItemInfo:
    code: str
    name: str
    group: str
    uom: str
    usd_rate: float
    usd_cost: float
    reorder_level: float
    reorder_qty: float
    is_stock: bool
    # How often it sells, relative to other items.
    popularity: float


@dataclass
class PartyInfo:
    name: str
    company: str
    branch: str
    territory: str
    currency: str
    terms: int
    weight: float
    group: str


# The first suppliers of each company carry the item range (see buying.setup).
MAIN_SUPPLIERS = 8
# Lines per sales invoice on average (the weights the selling module draws from).
LINES_PER_INVOICE = 2.54
# US customers order bigger quantities.
QTY_FACTOR = {"KES": 1.0, "USD": 1.8}


def qty_range(item: ItemInfo) -> tuple[int, int]:
    """Wholesale order quantities: more units of cheap things."""
    if item.usd_rate < 5:
        return 50, 600
    if item.usd_rate < 30:
        return 10, 150
    if item.usd_rate < 100:
        return 3, 40
    return 2, 15


def monthly_demand(
    item: ItemInfo, invoices: float, total_popularity: float, currency: str
) -> float:
    """Expected units sold per month, given the invoices per month of the place it sells in."""
    lo, hi = qty_range(item)
    share = item.popularity / total_popularity if total_popularity else 0.0
    return invoices * LINES_PER_INVOICE * share * (lo + hi) / 2 * QTY_FACTOR[currency]


def price(company: CompanyInfo, usd: float) -> float:
    """A catalogue price in the company's currency, rounded as a shop would."""
    value = usd * company.fx
    return round(value / 5) * 5 if value >= 100 else round(value, 2)


def setup(s: Seeder) -> None:
    for code, symbol in CURRENCIES:
        s.insert("Currency", {"currency_name": code, "symbol": symbol, "enabled": 1})
    for uom, whole in UOMS:
        s.insert("UOM", {"uom_name": uom, "must_be_whole_number": whole})
    for company in COMPANIES:
        s.companies[company.name] = company
        for branch in company.branches:
            territory, city, weight = BRANCHES[branch]
            s.branches[branch] = BranchInfo(branch, company.name, territory, city, weight=weight)
    s.insert("Territory", {"territory_name": "All Territories", "is_group": 1})
    for territory, parent, is_group in TERRITORIES:
        s.insert(
            "Territory",
            {"territory_name": territory, "parent_territory": parent, "is_group": is_group},
        )
    s.insert("Customer Group", {"customer_group_name": "All Customer Groups", "is_group": 1})
    for group in CUSTOMER_GROUPS:
        s.insert(
            "Customer Group",
            {"customer_group_name": group, "parent_customer_group": "All Customer Groups"},
        )
    s.insert("Supplier Group", {"supplier_group_name": "All Supplier Groups", "is_group": 1})
    for group in SUPPLIER_GROUPS:
        s.insert(
            "Supplier Group",
            {"supplier_group_name": group, "parent_supplier_group": "All Supplier Groups"},
        )
    s.insert("Item Group", {"item_group_name": "All Item Groups", "is_group": 1})
    parents = {parent for _, parent in names.ITEM_GROUPS}
    for group, parent in names.ITEM_GROUPS:
        s.insert(
            "Item Group",
            {
                "item_group_name": group,
                "parent_item_group": parent,
                "is_group": int(group in parents),
            },
        )
    for mode, kind in MODES_OF_PAYMENT:
        s.insert("Mode of Payment", {"mode_of_payment": mode, "type": kind})
    fiscal_years(s)
    for company in COMPANIES:
        create_company(s, company)
        for branch in company.branches:
            s.insert("Branch", {"branch": branch, "company": company.name})
        for side in ("Selling", "Buying"):
            s.insert(
                "Price List",
                {
                    "price_list_name": f"Standard {side} {company.currency}",
                    "currency": company.currency,
                    "selling": int(side == "Selling"),
                    "buying": int(side == "Buying"),
                },
            )
        tax_templates(s, company)
        warehouses(s, company)


def tax_templates(s: Seeder, company: CompanyInfo) -> None:
    """The company's default VAT templates, which new transactions take their taxes from."""
    for side in ("Sales", "Purchase"):
        rate = f"{company.tax_rate:g}"
        s.insert(
            f"{side} Taxes and Charges Template",
            {
                "title": f"{company.country} VAT {rate}% ({side}) - {company.abbr}",
                "company": company.name,
                "is_default": 1,
                "taxes": [
                    {
                        "charge_type": "On Net Total",
                        "account_head": company.acc("VAT"),
                        "description": f"VAT {rate}%",
                        "rate": company.tax_rate,
                    }
                ],
            },
        )


def warehouses(s: Seeder, company: CompanyInfo) -> None:
    stock_account = company.acc("Stock In Hand")
    root = s.insert(
        "Warehouse",
        {"warehouse_name": "All Warehouses", "company": company.name, "is_group": 1},
    )
    for branch in company.branches:
        doc = s.insert(
            "Warehouse",
            {
                "warehouse_name": f"{branch} Stores",
                "company": company.name,
                "parent_warehouse": root["name"],
                "warehouse_type": "Stores",
                "account": stock_account,
                "branch": branch,
            },
        )
        s.branches[branch].warehouse = doc["name"]
    s.insert(
        "Warehouse",
        {
            "warehouse_name": "Goods In Transit",
            "company": company.name,
            "parent_warehouse": root["name"],
            "warehouse_type": "Transit",
            "account": stock_account,
        },
    )


def _company_names(
    s: Seeder,
    heads: tuple[str, ...],
    tails: tuple[str, ...],
    suffixes: tuple[str, ...],
    count: int,
    taken: set[str],
) -> list[str]:
    combos = [f"{h} {t}" for h in heads for t in tails]
    s.rng.shuffle(combos)
    out: list[str] = []
    for combo in combos:
        if len(out) >= count:
            break
        suffix = s.pick(suffixes)
        name = f"{combo} {suffix}".strip()
        if name in taken or combo in taken:
            continue
        taken.add(name)
        out.append(name)
    return out


def _phone(s: Seeder, kenyan: bool) -> str:
    if kenyan:
        return f"+254 7{s.rng.randint(10, 99)} {s.rng.randint(100, 999)} {s.rng.randint(100, 999)}"
    return f"+1 {s.rng.randint(201, 989)} {s.rng.randint(200, 999)} {s.rng.randint(1000, 9999)}"


def _email(name: str, domain_tail: str) -> str:
    slug = "".join(c for c in name.lower() if c.isalnum() or c == " ").split()
    return f"info@{''.join(slug[:2])}.{domain_tail}"


def customers(s: Seeder) -> None:
    total = s.n(230, minimum=len(names.FIXED_CUSTOMERS) + 14)
    taken = {name for name, _ in names.FIXED_CUSTOMERS}
    # Two thirds of the customers buy from the Kenyan company, a third from the US one.
    ke_count = (total * 2) // 3 - 4
    us_count = total - ke_count - len(names.FIXED_CUSTOMERS)
    generated: list[tuple[str, str]] = []
    ke_branches = [b for b in s.branches.values() if b.company == COMPANIES[0].name]
    us_branches = [b for b in s.branches.values() if b.company == COMPANIES[1].name]
    for name in _company_names(
        s, names.KE_NAME_HEADS, names.KE_NAME_TAILS, names.KE_SUFFIXES, ke_count, taken
    ):
        generated.append((name, s.weighted(ke_branches, [b.weight for b in ke_branches]).name))
    for name in _company_names(
        s, names.US_NAME_HEADS, names.US_NAME_TAILS, names.US_SUFFIXES, us_count, taken
    ):
        generated.append((name, s.weighted(us_branches, [b.weight for b in us_branches]).name))
    parties: list[PartyInfo] = []
    for index, (name, branch_name) in enumerate([*names.FIXED_CUSTOMERS, *generated]):
        branch = s.branches[branch_name]
        company = s.companies[branch.company]
        kenyan = company.currency == "KES"
        fixed = index < len(names.FIXED_CUSTOMERS)
        group = "Wholesale" if fixed else s.weighted(CUSTOMER_GROUPS, (3, 4, 2, 1, 1))
        terms = 30 if fixed else s.weighted((15, 30, 45, 60), (2, 6, 2, 1))
        # Pareto-like: a few customers buy much more than the rest.
        weight = 6.0 if fixed else s.rng.paretovariate(1.6)
        tax_id = (
            f"P05{s.rng.randint(1000000, 9999999)}{chr(65 + s.rng.randrange(26))}"
            if kenyan
            else f"{s.rng.randint(10, 99)}-{s.rng.randint(1000000, 9999999)}"
        )
        s.insert(
            "Customer",
            {
                "customer_name": name,
                "customer_type": "Individual" if group == "Individual" else "Company",
                "customer_group": group,
                "territory": branch.territory,
                "default_currency": company.currency,
                "default_price_list": f"Standard Selling {company.currency}",
                "tax_id": tax_id,
                "email_id": _email(name, "co.ke" if kenyan else "com"),
                "mobile_no": _phone(s, kenyan),
                "credit_limit": round(
                    s.rng.choice((5_000, 10_000, 25_000, 50_000)) * company.fx, -3
                ),
                "payment_terms_days": terms,
                "branch": branch_name,
            },
        )
        parties.append(
            PartyInfo(
                name,
                company.name,
                branch_name,
                branch.territory,
                company.currency,
                terms,
                weight,
                group,
            )
        )
    s.data["customers"] = parties


def suppliers(s: Seeder) -> None:
    total = s.n(88, minimum=12)
    ke_count = (total * 3) // 5
    taken: set[str] = set()
    parties: list[PartyInfo] = []
    sides = [
        (
            COMPANIES[0],
            _company_names(
                s,
                names.SUPPLIER_HEADS_KE,
                names.SUPPLIER_TAILS,
                ("Ltd", "Limited", "Ltd"),
                ke_count,
                taken,
            ),
        ),
        (
            COMPANIES[1],
            _company_names(
                s,
                names.SUPPLIER_HEADS_US,
                names.SUPPLIER_TAILS,
                ("Inc", "LLC", "Corp"),
                total - ke_count,
                taken,
            ),
        ),
    ]
    for company, supplier_names in sides:
        for rank, name in enumerate(supplier_names):
            group = s.pick(SUPPLIER_GROUPS)
            terms = s.weighted((30, 45, 60), (5, 2, 1))
            s.insert(
                "Supplier",
                {
                    "supplier_name": name,
                    "supplier_type": "Company",
                    "supplier_group": group,
                    "country": company.country,
                    "default_currency": company.currency,
                    "default_price_list": f"Standard Buying {company.currency}",
                    "payment_terms_days": terms,
                    "email_id": _email(name, "co.ke" if company.currency == "KES" else "com"),
                    # Only occasional suppliers (not the main ones, see buying.setup) are held.
                    "on_hold": int(rank >= MAIN_SUPPLIERS and s.rng.random() < 0.06),
                },
            )
            parties.append(
                PartyInfo(name, company.name, "", "", company.currency, terms, 1.0, group)
            )
    s.data["suppliers"] = parties


def items(s: Seeder) -> None:
    count = s.n(330, minimum=40)
    numbers = s.rng.sample(range(1000, 9999), count)
    seen: set[str] = set()
    out: list[ItemInfo] = []
    for number in numbers:
        group, product, uom, base, with_material = s.pick(names.PRODUCTS)
        code, colour = s.pick(names.COLOURS)
        material = s.pick(names.MATERIALS) if with_material else ""
        name = " ".join(p for p in (colour, material, product) if p)
        if name in seen:
            # Same product twice: a size variant keeps names distinct.
            name = f"{name} {s.pick(('Small', 'Large', 'XL', 'Heavy Duty', 'Compact'))}"
        seen.add(name)
        usd = round(base * s.rng.uniform(0.8, 1.35), 2)
        cost = round(usd * s.rng.uniform(0.58, 0.74), 2)
        info = ItemInfo(
            code=f"SKU-{number}-{code}",
            name=name,
            group=group,
            uom=uom,
            usd_rate=usd,
            usd_cost=cost,
            reorder_level=0.0,
            reorder_qty=0.0,
            is_stock=True,
            popularity=s.rng.paretovariate(2.0),
        )
        out.append(info)
    # Reorder levels follow demand: about a month of sales in an average branch.
    total = sum(i.popularity for i in out)
    per_branch = s.data["invoices_per_month"] / len(s.branches)
    for info in out:
        demand = monthly_demand(info, per_branch, total, "KES")
        info.reorder_level = float(max(5, round(demand / 5) * 5))
        info.reorder_qty = info.reorder_level * 2
    for code, name, usd in SERVICE_ITEMS:
        out.append(
            ItemInfo(
                code,
                name,
                "Services",
                "Hour" if "Hour" in name else "Nos",
                usd,
                0.0,
                0.0,
                0.0,
                False,
                0.0,
            )
        )
    for info in out:
        s.insert(
            "Item",
            {
                "item_code": info.code,
                "item_name": info.name,
                "item_group": info.group,
                "stock_uom": info.uom,
                "brand": s.pick(names.BRANDS) if info.is_stock else None,
                "description": f"{info.name} ({info.group})",
                "is_stock_item": int(info.is_stock),
                "is_purchase_item": int(info.is_stock),
                "valuation_rate": info.usd_cost,
                "standard_rate": info.usd_rate,
                "reorder_level": info.reorder_level,
                "reorder_qty": info.reorder_qty,
            },
        )
        for company in COMPANIES:
            s.insert(
                "Item Price",
                {
                    "item_code": info.code,
                    "price_list": f"Standard Selling {company.currency}",
                    "price_list_rate": price(company, info.usd_rate),
                    "currency": company.currency,
                    "uom": info.uom,
                    "selling": 1,
                },
            )
            if info.is_stock:
                s.insert(
                    "Item Price",
                    {
                        "item_code": info.code,
                        "price_list": f"Standard Buying {company.currency}",
                        "price_list_rate": price(company, info.usd_cost),
                        "currency": company.currency,
                        "uom": info.uom,
                        "buying": 1,
                    },
                )
    s.data["items"] = out
