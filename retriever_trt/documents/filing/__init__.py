"""What a filing says about itself: form, company, fiscal year, cover fields, registrant and
auditor, read from its text where no tags give them."""
