"""Document scanning: a supplier invoice or customer purchase order (PDF or image) → text →
structured fields → a draft ERP document the user reviews and confirms.

``extract`` turns bytes into text (a PDF's text layer, Tesseract OCR for images and scanned
pages, or a configured vision model); ``parse`` structures that text with deterministic rules
(no model needed); ``draft`` looks the party and items up in the ERP through the gateway, as
the user, and prepares the create proposal. The document's content is data throughout: it is
never sent to a model as instructions and nothing is written until the user confirms.

Reading a file is bounded: ``limits`` admits every image ``images`` makes (pixels, shape,
memory) before it is allocated, and ``sandbox`` runs the reading in a worker process under a
memory and CPU-time limit, so a hostile file costs one request, never the server.
"""
