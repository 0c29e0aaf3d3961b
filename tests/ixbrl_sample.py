# ruff: noqa: E501  (an HTML document, written as the SEC lays it out)
"""A small inline-XBRL filing written by the tests: one company, one income statement with
two fiscal years, "$" and ")" in cells of their own as SEC filings lay them out."""

from __future__ import annotations

from pathlib import Path

_HEAD = """<?xml version="1.0" encoding="utf-8"?>
<html xmlns="http://www.w3.org/1999/xhtml" xmlns:ix="http://www.xbrl.org/2013/inlineXBRL"
 xmlns:xbrli="http://www.xbrl.org/2003/instance" xmlns:xbrldi="http://xbrl.org/2006/xbrldi"
 xmlns:iso4217="http://www.xbrl.org/2003/iso4217" xmlns:dei="http://xbrl.sec.gov/dei/2024"
 xmlns:us-gaap="http://fasb.org/us-gaap/2024" xmlns:x="http://example.com/x">
<head><title>{ticker}-20241231</title></head><body>
<div style="display:none"><ix:header><ix:hidden>
<ix:nonNumeric contextRef="c-1" name="dei:DocumentType">10-K</ix:nonNumeric>
<ix:nonNumeric contextRef="c-1" name="dei:DocumentFiscalYearFocus">{year}</ix:nonNumeric>
<ix:nonNumeric contextRef="c-1" name="dei:DocumentFiscalPeriodFocus">FY</ix:nonNumeric>
</ix:hidden><ix:resources>
<xbrli:context id="c-1"><xbrli:entity><xbrli:identifier scheme="http://www.sec.gov/CIK">1</xbrli:identifier></xbrli:entity>
<xbrli:period><xbrli:startDate>{year}-01-01</xbrli:startDate><xbrli:endDate>{year}-12-31</xbrli:endDate></xbrli:period></xbrli:context>
<xbrli:context id="c-0"><xbrli:entity><xbrli:identifier scheme="http://www.sec.gov/CIK">1</xbrli:identifier></xbrli:entity>
<xbrli:period><xbrli:startDate>{prior}-01-01</xbrli:startDate><xbrli:endDate>{prior}-12-31</xbrli:endDate></xbrli:period></xbrli:context>
<xbrli:context id="c-2"><xbrli:entity><xbrli:identifier scheme="http://www.sec.gov/CIK">1</xbrli:identifier>
<xbrli:segment><xbrldi:explicitMember dimension="us-gaap:StatementBusinessSegmentsAxis">x:CloudMember</xbrldi:explicitMember></xbrli:segment></xbrli:entity>
<xbrli:period><xbrli:startDate>{year}-01-01</xbrli:startDate><xbrli:endDate>{year}-12-31</xbrli:endDate></xbrli:period></xbrli:context>
<xbrli:unit id="usd"><xbrli:measure>iso4217:USD</xbrli:measure></xbrli:unit>
<xbrli:unit id="employee"><xbrli:measure>employee</xbrli:measure></xbrli:unit>
</ix:resources></ix:header></div>
<div><span>{name}</span></div>
<div><span>For the fiscal year ended December 31, {year}</span></div>
<div><span><ix:nonNumeric contextRef="c-1" name="dei:EntityRegistrantName">{name}</ix:nonNumeric>
 (<ix:nonNumeric contextRef="c-1" name="dei:TradingSymbol">{ticker}</ix:nonNumeric>)
 sells widgets. Revenue grew on strong demand for widgets in every region.</span></div>
<div style="page-break-after:always"></div>
<div><span>CONSOLIDATED STATEMENTS OF OPERATIONS</span></div>
<div><span>(In millions)</span></div>
<table>
<tr><td></td><td colspan="3"><span>Year Ended December 31,</span></td></tr>
<tr><td></td><td colspan="2">{year}</td><td></td><td colspan="2">{prior}</td></tr>
<tr><td>Revenue</td><td>$</td><td><ix:nonFraction name="us-gaap:Revenues" contextRef="c-1" unitRef="usd" decimals="-6" scale="6" format="ixt:num-dot-decimal" id="rev-1">{rev:,}</ix:nonFraction></td><td></td>
<td>$</td><td><ix:nonFraction name="us-gaap:Revenues" contextRef="c-0" unitRef="usd" decimals="-6" scale="6" format="ixt:num-dot-decimal" id="rev-0">{rev0:,}</ix:nonFraction></td></tr>
<tr><td>Cloud revenue</td><td></td><td><ix:nonFraction name="us-gaap:Revenues" contextRef="c-2" unitRef="usd" decimals="-6" scale="6" format="ixt:num-dot-decimal" id="cloud-1">{cloud:,}</ix:nonFraction></td><td></td><td></td><td>—</td></tr>
{rd_row}<tr><td>Operating income (loss)</td><td></td><td><ix:nonFraction name="us-gaap:OperatingIncomeLoss" contextRef="c-1" unitRef="usd" decimals="-6" scale="6" format="ixt:num-dot-decimal" id="oi-1">{oi:,}</ix:nonFraction></td><td></td>
<td>(</td><td><ix:nonFraction name="us-gaap:OperatingIncomeLoss" contextRef="c-0" unitRef="usd" decimals="-6" scale="6" sign="-" format="ixt:num-dot-decimal" id="oi-0">{loss0:,}</ix:nonFraction></td><td>)</td></tr>
</table>
{staff_text}</body></html>
"""

# A head count tagged for the prior year only, and the current year's stated in the prose.
_STAFF = """<div><span>At December 31, {prior} we had <ix:nonFraction name="x:NumberOfEmployees" contextRef="c-0" unitRef="employee" decimals="INF" format="ixt:num-dot-decimal" id="staff-0">{staff0:,}</ix:nonFraction> employees.</span></div>
<div><span>As of December 31, {year}, our employee headcount worldwide was {staff:,}.</span></div>
"""

# A charge tagged in the prose as written, to the hundred million ($2.4 billion: decimals -8).
_CHARGE = """<div><span>In {year} we recorded impairment charges of $<ix:nonFraction name="us-gaap:AssetImpairmentCharges" contextRef="c-1" unitRef="usd" decimals="-8" scale="9" format="ixt:num-dot-decimal" id="imp-1">2.4</ix:nonFraction> billion.</span></div>
"""


_RD_ROW = """<tr><td>Research and development</td><td></td><td><ix:nonFraction name="us-gaap:ResearchAndDevelopmentExpenseSoftwareExcludingAcquiredInProcessCost" contextRef="c-1" unitRef="usd" decimals="-6" scale="6" format="ixt:num-dot-decimal" id="rd-1">{rd:,}</ix:nonFraction></td><td></td><td></td><td>—</td></tr>
"""

# A segment's profit tagged with a concept of the company's own, as Smucker's and JCI's are.
_SEGMENT_PROFIT_ROW = """<tr><td>Cloud</td><td></td><td><ix:nonFraction name="x:SegmentReportingSegmentProfit" contextRef="c-2" unitRef="usd" decimals="-6" scale="6" format="ixt:num-dot-decimal" id="sp-1">{profit:,}</ix:nonFraction></td><td></td><td></td><td>—</td></tr>
"""

_COST_ROW = """<tr><td>Cost of revenue</td><td></td><td><ix:nonFraction name="us-gaap:CostOfRevenue" contextRef="c-1" unitRef="usd" decimals="-6" scale="6" format="ixt:num-dot-decimal" id="cost-1">{cost:,}</ix:nonFraction></td><td></td><td></td><td>—</td></tr>
"""


def write_filing(folder: Path, name: str, ticker: str, year: int, rev: int, rev0: int,
                 oi: int, loss0: int, cloud: int = 7, rd: int | None = None,
                 cost: int | None = None, staff: tuple[int, int] | None = None,
                 charge: tuple[str, ...] | None = None,
                 segment_profit: int | None = None) -> Path:
    """`rd`: a research and development row, tagged with a concept outside the answer
    vocabulary's list for it; `cost`: a cost of revenue row (and no gross profit row);
    `staff`: (the year's head count, stated in prose only; the prior year's, tagged);
    `charge`: a $2.4 billion impairment charge tagged in a sentence, and these sentences;
    `segment_profit`: the Cloud segment's profit, tagged with the company's own concept."""
    path = folder / f"{ticker.lower()}-10-k-{year + 1}-02-01.htm"
    rows = ("" if rd is None else _RD_ROW.format(rd=rd)) + \
        ("" if cost is None else _COST_ROW.format(cost=cost)) + \
        ("" if segment_profit is None else _SEGMENT_PROFIT_ROW.format(profit=segment_profit))
    staff_text = "" if staff is None else \
        _STAFF.format(prior=year - 1, year=year, staff=staff[0], staff0=staff[1])
    if charge is not None:
        staff_text += _CHARGE.format(year=year) + \
            "".join(f"<div><span>{sentence}</span></div>\n" for sentence in charge)
    path.write_text(_HEAD.format(name=name, ticker=ticker, year=year, prior=year - 1, rev=rev,
                                 rev0=rev0, oi=oi, loss0=loss0, cloud=cloud, rd_row=rows,
                                 staff_text=staff_text),
                    encoding="utf-8")
    return path
