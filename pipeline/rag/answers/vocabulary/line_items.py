"""The line-item vocabulary: what analysts call a statement line, the XBRL concepts that tag
it (first found wins), and whether it is a flow over a period or a balance at a date.

Metrics built from line items (margins, ratios, free cash flow) are in `metrics.py`. Both
are matched against a question's words by their names and synonyms, longest first.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum


class Kind(Enum):
    FLOW = "flow"          # a duration fact: revenue for the year
    BALANCE = "balance"    # an instant fact: cash at year end


@dataclass(frozen=True)
class LineItem:
    name: str
    concepts: tuple[str, ...]
    kind: Kind
    synonyms: tuple[str, ...] = ()
    per_share: bool = False
    # A cost or a cash payment, which the taxonomy tags as a positive amount and a printed
    # statement may show in parentheses as a deduction: read from a table without the sign.
    outflow: bool = False

    @property
    def phrases(self) -> tuple[str, ...]:
        return (self.name, *self.synonyms)


def _g(*names: str) -> tuple[str, ...]:
    return tuple(n if ":" in n else f"us-gaap:{n}" for n in names)


F, B = Kind.FLOW, Kind.BALANCE
LINE_ITEMS: tuple[LineItem, ...] = (
    LineItem("revenue", _g("Revenues", "RevenueFromContractWithCustomerExcludingAssessedTax",
                           "RevenueFromContractWithCustomerIncludingAssessedTax",
                           "SalesRevenueNet", "RevenuesNetOfInterestExpense"), F,
             ("revenues", "total revenue", "total revenues", "net sales", "total net sales",
              "net revenue", "net revenues", "sales", "top line")),
    LineItem("cost of revenue", _g("CostOfRevenue", "CostOfGoodsAndServicesSold",
                                   "CostOfGoodsSold"), F,
             ("cost of revenues", "cost of sales", "total cost of sales", "cost of goods sold",
              "cogs", "cost of goods and services sold"), outflow=True),
    LineItem("gross profit", _g("GrossProfit"), F, ("gross margin dollars",)),
    # the taxonomy's R&D expense, else the same line where acquired in-process R&D is apart
    # (Amgen, drug makers) or the software R&D line
    LineItem("research and development expense", _g(
        "ResearchAndDevelopmentExpense", "ResearchAndDevelopmentExpenseExcludingAcquiredInProcessCost",
        "ResearchAndDevelopmentExpenseSoftwareExcludingAcquiredInProcessCost"), F,
             ("research and development", "r&d", "r&d expense", "technology and development"),
             outflow=True),
    LineItem("selling, general and administrative expense",
             _g("SellingGeneralAndAdministrativeExpense"), F,
             # NVIDIA's own label reads "Sales, general and administrative", Intel's
             # "Marketing, general, and administrative"
             ("sg&a", "selling general and administrative", "selling, general and administrative",
              "sales, general and administrative", "marketing, general and administrative",
              "mg&a"),
             outflow=True),
    LineItem("operating expenses", _g("OperatingExpenses", "CostsAndExpenses"), F,
             ("total operating expenses", "opex", "total costs and expenses"), outflow=True),
    LineItem("operating income", _g("OperatingIncomeLoss"), F,
             ("operating profit", "operating earnings", "income from operations", "operating loss",
              "operating income (loss)", "income (loss) from operations", "loss from operations")),
    LineItem("pretax income", _g(
        "IncomeLossFromContinuingOperationsBeforeIncomeTaxesExtraordinaryItemsNoncontrollingInterest",
        "IncomeLossFromContinuingOperationsBeforeIncomeTaxesMinorityInterestAndIncomeLossFromEquityMethodInvestments"),
        F, ("income before income taxes", "income before provision for income taxes",
            "pre-tax income", "earnings before income taxes", "income before taxes",
            # the continuing operations' own, as most statements print it; and the operand
            # of an effective tax rate a question defines
            "income from continuing operations before income taxes",
            "earnings from continuing operations before income taxes",
            "income before income tax expense", "income before income tax")),
    LineItem("income tax expense", _g("IncomeTaxExpenseBenefit"), F,
             ("provision for income taxes", "income taxes", "tax expense", "income tax provision")),
    # the company's own share first: Thermo Fisher tags its "Net income attributable to
    # Thermo Fisher" (6,335) as available to common, beside ProfitLoss's 6,338 with the
    # noncontrolling interests'
    LineItem("net income", _g("NetIncomeLoss", "NetIncomeLossAvailableToCommonStockholdersBasic",
                              "ProfitLoss"), F,
             ("net earnings", "net profit", "net loss", "net income attributable", "profit",
              "earnings",
              "bottom line", "net income (loss)", "net income (loss) attributable")),
    # ASC 810's consolidated net income: before the noncontrolling interests' share (a company
    # with none tags NetIncomeLoss alone, the same figure); and that share on its own
    LineItem("net income including noncontrolling interests", _g("ProfitLoss", "NetIncomeLoss"),
             F, ("consolidated net income", "net income including noncontrolling interest",
                 "net earnings including noncontrolling interests",
                 "net income including minority interests", "net income including minority interest",
                 "consolidated net earnings", "net income before noncontrolling interests")),
    LineItem("net income attributable to noncontrolling interests",
             _g("NetIncomeLossAttributableToNoncontrollingInterest"), F,
             ("net income attributable to noncontrolling interest",
              "net income attributable to minority interests", "minority interest in net income",
              "net earnings attributable to noncontrolling interests",
              "noncontrolling interests' share of net income")),
    LineItem("diluted eps", _g("EarningsPerShareDiluted"), F,
             ("diluted earnings per share", "earnings per diluted share", "diluted net income per share",
              "eps diluted", "diluted loss per share", "diluted earnings"), per_share=True),
    LineItem("basic eps", _g("EarningsPerShareBasic"), F,
             ("basic earnings per share", "earnings per share", "eps", "basic net income per share",
              "basic loss per share", "basic earnings", "net income per share",
              "net earnings per share", "net loss per share", "loss per share"),
             per_share=True),
    # Share counts: flows (a period's weighted average), in shares, not dollars.
    LineItem("diluted weighted-average shares", _g("WeightedAverageNumberOfDilutedSharesOutstanding"),
             F, ("diluted weighted-average share count", "diluted share count", "diluted shares",
                 "weighted-average diluted shares", "diluted weighted average shares",
                 "diluted weighted-average shares outstanding", "diluted shares outstanding")),
    LineItem("basic weighted-average shares", _g("WeightedAverageNumberOfSharesOutstandingBasic"),
             F, ("basic weighted-average share count", "basic share count", "basic shares",
                 "weighted-average basic shares", "basic weighted average shares",
                 "basic weighted-average shares outstanding", "basic shares outstanding")),
    LineItem("depreciation and amortization", _g(
        "DepreciationDepletionAndAmortization", "DepreciationAndAmortization",
        "DepreciationAmortizationAndAccretionNet"), F, ("d&a", "depreciation"), outflow=True),
    # continuing operations' own where a company tags only that (AT&T)
    LineItem("operating cash flow", _g("NetCashProvidedByUsedInOperatingActivities",
                                       "NetCashProvidedByUsedInOperatingActivitiesContinuingOperations"),
             F,
             ("cash from operations", "cash flow from operations", "cash generated by operating activities",
              "net cash provided by operating activities", "cash from operating activities",
              "cash provided by operations", "cash generated by operations",
              "cash generated from operations", "cash flows from operations",
              "operating cash flows", "operating activities")),
    LineItem("capital expenditures", _g("PaymentsToAcquirePropertyPlantAndEquipment",
                                        "PaymentsToAcquireProductiveAssets"), F,
             ("capex", "capital expenditure", "purchases of property and equipment",
              "payments for acquisition of property, plant and equipment",
              "payments to acquire property, plant and equipment",
              "purchases of property, plant and equipment",
              "additions to property, plant and equipment", "additions to property and equipment",
              "acquisitions of property and equipment",
              "acquisitions of property, plant and equipment"),
             outflow=True),
    LineItem("investing cash flow", _g("NetCashProvidedByUsedInInvestingActivities",
                                       "NetCashProvidedByUsedInInvestingActivitiesContinuingOperations"),
             F,
             ("net cash used in investing activities", "cash from investing activities",
              "net cash provided by (used in) investing activities", "investing activities")),
    LineItem("financing cash flow", _g("NetCashProvidedByUsedInFinancingActivities",
                                       "NetCashProvidedByUsedInFinancingActivitiesContinuingOperations"),
             F,
             ("net cash used in financing activities", "cash from financing activities",
              "net cash provided by (used in) financing activities", "financing activities")),
    # the expense the cash flow statement adds back (ShareBasedCompensation), else the
    # expense the notes allocate
    LineItem("share-based compensation", _g("ShareBasedCompensation",
                                            "AllocatedShareBasedCompensationExpense"), F,
             ("stock-based compensation", "share based compensation", "stock based compensation",
              "sbc", "stock compensation", "share-based compensation expense",
              "stock-based compensation expense"), outflow=True),
    LineItem("dividends paid", _g("PaymentsOfDividends", "PaymentsOfDividendsCommonStock"), F,
             ("dividends", "cash dividends paid", "payments for dividends"), outflow=True),
    LineItem("share repurchases", _g("PaymentsForRepurchaseOfCommonStock"), F,
             ("buybacks", "buyback", "stock repurchases", "repurchases of common stock",
              # the verb as analysts write it: "spent buying back its common stock"
              "buying back", "bought back", "buy back", "share buybacks",
              # the cash flow statement's row as Coca-Cola prints it
              "purchases of stock for treasury", "purchases of treasury stock"), outflow=True),
    LineItem("cash and cash equivalents", _g("CashAndCashEquivalentsAtCarryingValue"), B,
             ("cash", "cash and equivalents")),
    LineItem("accounts receivable", _g("AccountsReceivableNetCurrent"), B,
             ("receivables", "accounts receivable, net", "trade receivables")),
    LineItem("inventory", _g("InventoryNet"), B, ("inventories",)),
    LineItem("total current assets", _g("AssetsCurrent"), B, ("current assets",)),
    LineItem("property, plant and equipment", _g("PropertyPlantAndEquipmentNet"), B,
             ("pp&e", "net pp&e", "property and equipment", "property, plant and equipment, net",
              "property and equipment, net", "fixed assets", "ppne", "net ppne", "ppe", "net ppe",
              "pp&e, net")),
    LineItem("total assets", _g("Assets"), B, ("assets",)),
    LineItem("accounts payable", _g("AccountsPayableCurrent"), B, ("payables", "trade payables")),
    LineItem("total current liabilities", _g("LiabilitiesCurrent"), B, ("current liabilities",)),
    LineItem("long-term debt", _g("LongTermDebtNoncurrent", "LongTermDebt"), B,
             ("long term debt", "term debt", "non-current debt", "noncurrent debt")),
    LineItem("total liabilities", _g("Liabilities"), B, ("liabilities",)),
    LineItem("retained earnings", _g("RetainedEarningsAccumulatedDeficit"), B,
             ("retained earnings (accumulated deficit)", "accumulated deficit",
              "reinvested earnings")),
    LineItem("total shareholders' equity", _g(
        "StockholdersEquity",
        "StockholdersEquityIncludingPortionAttributableToNoncontrollingInterest"), B,
        ("shareholders' equity", "stockholders' equity", "total stockholders' equity", "equity",
         "shareholders equity", "stockholders equity")),
    # "Total equity" is the balance sheet's line after the noncontrolling interests (GE's
    # 28,579 beside its shareholders' 27,378); a company with none tags StockholdersEquity
    LineItem("total equity", _g(
        "StockholdersEquityIncludingPortionAttributableToNoncontrollingInterest",
        "StockholdersEquity"), B,
        ("equity including noncontrolling interests",
         "total equity including noncontrolling interests")),
)
BY_NAME = {item.name: item for item in LINE_ITEMS}
# A figure per share ("per diluted share", "per-share data"): a price, not an amount or a count.
PER_SHARE = re.compile(r"\bper[ -](?:\w+ )?share\b", re.I)
