"""The oracle's line-item vocabulary and company names, for benchmarks/filings_gold.py.

A line item is what an analyst asks for ("operating income"): the us-gaap concepts that
tag it (the preferred first, alternates after), the statement row labels that show it
(a fact whose row is labelled otherwise is not this item: `Revenues` tagged on a segment
table's "Total" row is skipped), and the concept that includes noncontrolling interests,
where the company reports one (then the question says "attributable to <company>").
This is independent of finrag's own vocabulary on purpose: the gold must not share its
mistakes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum


class Statement(Enum):
    INCOME = "income statement"
    BALANCE = "balance sheet"
    CASH_FLOW = "cash flow statement"


class Measure(Enum):
    MONEY = "money"
    PER_SHARE = "per share"
    SHARES = "shares"


@dataclass(frozen=True)
class LineItem:
    key: str
    names: tuple[str, ...]          # how a question says it; several, for varied wording
    concepts: tuple[str, ...]       # us-gaap concepts, preferred first
    labels: str                     # a regex a showing row's label matches (case-insensitive)
    statement: Statement
    measure: Measure = Measure.MONEY
    plural: bool = False            # "What were Apple's total assets"
    nci_concept: str | None = None  # the same total including noncontrolling interests
    label_names: tuple[str, ...] = ()  # names used only where the row's label says them

    def names_for(self, label: str) -> tuple[str, ...]:
        """The names that suit a row labelled `label` ("net sales" only for net sales)."""
        said = tuple(n for n in self.label_names if n.lower() in label.lower())
        return tuple(n for n in self.names if n not in self.label_names) + said

    def __post_init__(self) -> None:
        if not self.names or not self.concepts:
            raise ValueError(f"line item {self.key}: give at least one name and one concept")
        re.compile(self.labels)

    def label_matches(self, label: str) -> bool:
        return re.search(self.labels, label, re.IGNORECASE) is not None


def _g(*names: str) -> tuple[str, ...]:
    return tuple(f"us-gaap:{n}" for n in names)


I, B, C = Statement.INCOME, Statement.BALANCE, Statement.CASH_FLOW
ITEMS: dict[str, LineItem] = {item.key: item for item in (
    LineItem("revenue", ("revenue", "total revenue", "net sales"),
             _g("Revenues", "RevenueFromContractWithCustomerExcludingAssessedTax", "SalesRevenueNet"),
             r"revenue|net sales|sales to customers", I, label_names=("net sales",)),
    LineItem("cost_of_revenue", ("cost of revenue", "cost of sales"),
             _g("CostOfRevenue", "CostOfGoodsAndServicesSold"),
             r"^(total )?cost of (revenues?|sales|goods sold|products sold)", I,
             label_names=("cost of sales",)),
    LineItem("gross_profit", ("gross profit",), _g("GrossProfit"), r"gross (profit|margin)", I),
    LineItem("rnd", ("research and development expense", "R&D expense"),
             _g("ResearchAndDevelopmentExpense"), r"research and development", I),
    LineItem("sga", ("selling, general and administrative expense", "SG&A expense"),
             _g("SellingGeneralAndAdministrativeExpense"),
             r"(selling|sales),? (general|marketing),? and administrative|selling and administrative",
             I),
    LineItem("operating_income", ("operating income", "income from operations"),
             _g("OperatingIncomeLoss"),
             r"operating (income|earnings|loss)|(income|earnings|loss)( ?/ ?\(loss\))? from operations",
             I),
    LineItem("income_tax", ("income tax expense", "provision for income taxes"),
             _g("IncomeTaxExpenseBenefit"), r"income tax|taxes on income", I),
    LineItem("net_income", ("net income", "net earnings"), _g("NetIncomeLoss"),
             r"net (income|earnings|loss)", I, nci_concept="us-gaap:ProfitLoss",
             label_names=("net earnings",)),
    LineItem("eps_diluted", ("diluted earnings per share", "diluted EPS"),
             _g("EarningsPerShareDiluted"), r"diluted", I, Measure.PER_SHARE),
    LineItem("eps_basic", ("basic earnings per share", "basic EPS"),
             _g("EarningsPerShareBasic"), r"basic", I, Measure.PER_SHARE),
    LineItem("diluted_shares", ("weighted-average diluted share count",
                                "diluted weighted-average share count"),
             _g("WeightedAverageNumberOfDilutedSharesOutstanding"), r"diluted", I, Measure.SHARES),
    LineItem("cash", ("cash and cash equivalents",), _g("CashAndCashEquivalentsAtCarryingValue"),
             r"^cash and (cash )?equivalents", B, plural=True),
    LineItem("inventory", ("inventories", "inventory"), _g("InventoryNet"), r"inventor", B,
             plural=True),
    LineItem("current_assets", ("total current assets", "current assets"), _g("AssetsCurrent"),
             r"total current assets", B, plural=True),
    LineItem("ppe", ("net property, plant and equipment", "PP&E, net"),
             _g("PropertyPlantAndEquipmentNet"), r"propert", B),
    LineItem("total_assets", ("total assets",), _g("Assets"), r"^total assets$", B, plural=True),
    LineItem("current_liabilities", ("total current liabilities", "current liabilities"),
             _g("LiabilitiesCurrent"), r"total current liabilities", B, plural=True),
    LineItem("long_term_debt", ("long-term debt",), _g("LongTermDebtNoncurrent"),
             r"long-term debt|^term debt$|^(total )?non-?current debt", B),
    LineItem("total_liabilities", ("total liabilities",), _g("Liabilities"),
             r"^total liabilities$", B, plural=True),
    LineItem("retained_earnings", ("retained earnings",), _g("RetainedEarningsAccumulatedDeficit"),
             r"retained earnings|reinvested earnings|accumulated deficit", B, plural=True),
    LineItem("equity", ("total stockholders' equity", "shareholders' equity"),
             _g("StockholdersEquity"),
             r"(stockholders|shareholders|shareowners)['’]? (equity|deficit)|equity attributable",
             B, nci_concept="us-gaap:StockholdersEquityIncludingPortionAttributableToNoncontrollingInterest"),
    LineItem("ocf", ("net cash provided by operating activities", "operating cash flow",
                     "cash flow from operations"),
             _g("NetCashProvidedByUsedInOperatingActivities"),
             r"operating activities|by operations", C),
    LineItem("capex", ("capital expenditures", "purchases of property and equipment"),
             _g("PaymentsToAcquirePropertyPlantAndEquipment", "PaymentsToAcquireProductiveAssets"),
             r"propert|capital (expenditures|investments)", C, plural=True),
    LineItem("investing_cf", ("net cash provided by (used in) investing activities",
                              "investing cash flow"),
             _g("NetCashProvidedByUsedInInvestingActivities"), r"investing activities", C),
    LineItem("financing_cf", ("net cash provided by (used in) financing activities",
                              "financing cash flow"),
             _g("NetCashProvidedByUsedInFinancingActivities"), r"financing activities", C),
    LineItem("dividends", ("dividends paid", "cash dividends paid"),
             _g("PaymentsOfDividends", "PaymentsOfDividendsCommonStock"), r"dividend", C,
             plural=True),
    LineItem("buybacks", ("share repurchases", "repurchases of common stock"),
             _g("PaymentsForRepurchaseOfCommonStock"),
             r"repurchase|purchases? of (common|treasury) stock|treasury stock|stock for treasury",
             C, plural=True),
)}


@dataclass(frozen=True)
class Company:
    name: str                 # as the record's `company` says it
    aliases: tuple[str, ...]  # how questions name it (the name first)


COMPANIES: dict[str, Company] = {t: Company(n[0], n) for t, n in {
    "aapl": ("Apple",), "abbv": ("AbbVie",), "adbe": ("Adobe",), "ba": ("Boeing",),
    "crm": ("Salesforce",), "hd": ("Home Depot",), "hubs": ("HubSpot",),
    "ibm": ("IBM",), "jnj": ("Johnson & Johnson", "J&J"), "ko": ("Coca-Cola",),
    "meta": ("Meta", "Meta Platforms"), "nflx": ("Netflix",), "nke": ("Nike",),
    "nvda": ("NVIDIA",), "pg": ("Procter & Gamble", "P&G"), "tsla": ("Tesla",),
    "unh": ("UnitedHealth", "UnitedHealth Group"), "unp": ("Union Pacific",), "v": ("Visa",),
    "wfc": ("Wells Fargo",),
}.items()}


def possessive(name: str) -> str:
    return name + ("'" if name.endswith("s") else "'s")
