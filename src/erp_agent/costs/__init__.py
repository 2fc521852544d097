"""What answers cost and where they fail, for administrators: each turn's model cost from a
price table in the settings (``prices.py``), stored with the turn in the interaction log, and
the views over that log (``report.py``): cost per day, user, organisation or model, the most
frequent failed or declined questions, and CSV exports of both."""
