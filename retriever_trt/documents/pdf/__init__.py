"""PDF filings: text lines from PDFium's character boxes, tables by position, statements by
title and shape, and the structure check before a page is read."""
