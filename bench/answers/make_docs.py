"""Write the binary documents of the answer benchmark (PDF, DOCX, PPTX, XLSX).

Run once with the dev extras installed (fpdf2, python-docx, python-pptx, openpyxl):
``python bench/answers/make_docs.py``. The generated files are committed next to the
text documents in ``bench/answers/docs/``; re-running rewrites them with the same text.
"""

from __future__ import annotations

from pathlib import Path

DOCS = Path(__file__).resolve().parent / "docs"

TRAVEL_PAGES = [
    ("Meridian Research Institute - Travel and Expenses Policy", [
        "This policy covers business travel by all staff and visiting researchers of the "
        "Meridian Research Institute. Travel must be approved in advance by your line manager.",
        "Flights. Book economy class for flights shorter than 6 hours. Premium economy may be "
        "booked for flights of 6 hours or more. Business class is never reimbursed.",
        "Trains. Use standard class for all train journeys. First class is allowed only when it "
        "costs less than standard class.",
        "Hotels. The hotel limit is 140 euros per night. In London and Paris the limit is "
        "190 euros per night. Book through the institute's travel desk whenever possible.",
    ]),
    ("Meals, mileage and claims", [
        "Meals. Staff receive a daily meal allowance of 45 euros while travelling. Alcohol is "
        "not reimbursed.",
        "Mileage. When you use your own car, the institute pays 0.30 euros per kilometre. Car "
        "sharing is encouraged.",
        "Receipts. A receipt is required for every expense above 25 euros.",
        "Claims. Submit your expense claim within 30 days of returning, using the Expensa "
        "system. Claims are approved by your line manager and paid with the next salary.",
    ]),
]

SLIDES = [
    ("Bluefin Logistics - Q3 2025 review", ["Presented by Marco Lindqvist, Chief Operating "
                                            "Officer", "Board meeting, 14 October 2025"]),
    ("Revenue", ["Q3 revenue reached 12.4 million euros", "Up 8% on Q2",
                 "Growth driven by new retail contracts"]),
    ("Service quality", ["On-time delivery rate: 96.2%", "Target for the year: 97%",
                         "Customer complaints fell by 11%"]),
    ("Network", ["New depot opened in Gdansk in August", "40 new drivers hired in Q3",
                 "Fleet size now 310 trucks"]),
    ("Q4 priorities", ["Electric van pilot with 15 vans in Rotterdam",
                       "New route-planning software from November",
                       "Hire a safety manager for the Gdansk depot"]),
]


def write_pdf(path: Path) -> None:
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_auto_page_break(auto=True, margin=15)
    for title, paragraphs in TRAVEL_PAGES:
        pdf.add_page()
        pdf.set_font("Helvetica", "B", 14)
        pdf.multi_cell(0, 8, title)
        pdf.ln(2)
        pdf.set_font("Helvetica", size=11)
        for paragraph in paragraphs:
            pdf.multi_cell(0, 6, paragraph)
            pdf.ln(3)
    pdf.output(str(path))


def write_docx(path: Path) -> None:
    import docx

    document = docx.Document()
    document.add_heading("Fernhill Software - New Starter Guide", level=1)
    document.add_paragraph(
        "Welcome to Fernhill Software. This guide tells you what to expect in your first "
        "weeks with us.")
    document.add_heading("Your first day", level=2)
    document.add_paragraph(
        "Please arrive at 9:30 on your first day. Reception is on the 4th floor of our office "
        "at 22 Albion Street, Leeds. Bring your passport or another photo ID for the "
        "right-to-work check.")
    document.add_paragraph(
        "Your laptop is set up by Tomasz Nowak from the IT team. You can choose between a "
        "14-inch ThinkPad and a MacBook Air. Every new starter is given a buddy from another "
        "team for the first month.")
    document.add_heading("Pay and probation", level=2)
    document.add_paragraph(
        "The probation period is 3 months. Salaries are paid on the last working day of "
        "each month, by bank transfer. Your first payslip arrives by email.")
    document.add_heading("Your first week", level=2)
    table = document.add_table(rows=1, cols=2)
    table.rows[0].cells[0].text = "Day"
    table.rows[0].cells[1].text = "What happens"
    for day, what in [("Monday", "Welcome breakfast and laptop setup"),
                      ("Tuesday", "Security training with the compliance team"),
                      ("Wednesday", "Meet your product team"),
                      ("Thursday", "Shadow a customer support call"),
                      ("Friday", "Lunch with the founders")]:
        cells = table.add_row().cells
        cells[0].text = day
        cells[1].text = what
    document.save(str(path))


def write_pptx(path: Path) -> None:
    from pptx import Presentation

    deck = Presentation()
    for number, (title, bullets) in enumerate(SLIDES):
        slide = deck.slides.add_slide(deck.slide_layouts[0 if number == 0 else 1])
        slide.shapes.title.text = title
        body = slide.placeholders[1].text_frame
        body.text = bullets[0]
        for bullet in bullets[1:]:
            body.add_paragraph().text = bullet
    deck.save(str(path))


def write_xlsx(path: Path) -> None:
    import openpyxl

    book = openpyxl.Workbook()
    hours = book.active
    hours.title = "Opening hours"
    hours.append(["Riverside Leisure Centre", "Monday-Friday", "Saturday", "Sunday"])
    hours.append(["Swimming pool", "6:30-21:30", "7:00-18:00", "8:00-16:00"])
    hours.append(["Gym", "6:00-22:00", "7:00-20:00", "8:00-18:00"])
    hours.append(["Sauna", "10:00-21:00", "10:00-18:00", "12:00-16:00"])
    hours.append(["Climbing wall", "16:00-21:00", "9:00-17:00", "closed"])
    prices = book.create_sheet("Prices")
    prices.append(["Activity", "Adult", "Child (under 16)"])
    prices.append(["Swim session", 5.20, 3.10])
    prices.append(["Sauna session", 7.50, "not allowed"])
    prices.append(["Climbing session", 9.00, 6.50])
    prices.append(["Gym day pass", 8.00, "not allowed"])
    book.save(str(path))


def main() -> None:
    DOCS.mkdir(parents=True, exist_ok=True)
    write_pdf(DOCS / "travel-expenses-policy.pdf")
    write_docx(DOCS / "new-starter-guide.docx")
    write_pptx(DOCS / "q3-business-review.pptx")
    write_xlsx(DOCS / "leisure-centre-timetable.xlsx")
    print(f"wrote 4 documents into {DOCS}")


if __name__ == "__main__":
    main()
