"""Content of the dev split's binary documents; written by bench/qa/make_docs.py."""

from __future__ import annotations

from typing import Any

KETTLE = [
    ("h1", "Brightwell KX200 Temperature Control Kettle - Instruction Manual"),
    ("p", "Model KX200. Please read these instructions before first use and keep them for "
          "future reference. This manual applies to the KX200 only; the earlier KX100 has a "
          "separate guide."),
    ("h2", "Safety"),
    ("p", "Only use the kettle with the base supplied. Never fill above the MAX mark (1.7 "
          "litres): boiling water may spill out. Do not open the lid while the water is "
          "boiling. Children under 8 must not use or clean the kettle."),
    ("h2", "Specifications"),
    ("table", ["Feature", "KX200"], [
        ["Capacity", "1.7 litres"],
        ["Minimum fill", "0.3 litres (one cup)"],
        ["Power", "3000 W"],
        ["Weight (empty)", "1.1 kg"],
        ["Cord length", "0.75 m"],
        ["Boil time (1 litre)", "2 minutes 30 seconds"],
        ["Temperature settings", "70, 80, 90 and 100 C"],
        ["Keep warm", "up to 30 minutes"],
        ["Filter", "removable stainless steel mesh"],
        ["Warranty", "2 years (3 years if registered online)"],
        ["Colours", "brushed steel, slate grey, cream"],
    ]),
    ("page",),
    ("h2", "Using your kettle"),
    ("p", "1. Fill the kettle with water between the MIN and MAX marks. 2. Place it on the "
          "base. 3. Press the temperature button until the light under the temperature you "
          "want comes on (70 C for green tea, 80 C for white tea, 90 C for coffee, 100 C to "
          "boil). 4. Press the start button. The kettle beeps twice when it reaches the "
          "temperature."),
    ("p", "Keep warm: hold the temperature button for 3 seconds after choosing a "
          "temperature. The kettle keeps the water at that temperature for up to 30 minutes, "
          "then switches off."),
    ("h2", "Descaling"),
    ("p", "In hard water areas descale the kettle every 4 weeks; in soft water areas every 3 "
          "months. To descale: fill the kettle with 0.5 litre of water and 0.5 litre of "
          "white vinegar. Leave it to stand for 1 hour without switching it on. Pour the "
          "solution away, then fill with clean water, boil and pour away twice."),
    ("page",),
    ("h2", "Troubleshooting"),
    ("table", ["Problem", "Cause", "What to do"], [
        ["The light flashes red", "The kettle was switched on empty (boil-dry protection)",
         "Let the kettle cool for 10 minutes, then fill it and start again"],
        ["The kettle does not switch on", "It is not seated on the base",
         "Lift it and place it back on the base until it clicks"],
        ["White flakes in the water", "Limescale", "Descale the kettle"],
        ["The water tastes of plastic", "A new kettle",
         "Boil a full kettle and pour the water away three times"],
        ["The kettle beeps five times", "The lid is open", "Close the lid firmly"],
    ]),
    ("h2", "Guarantee and service"),
    ("p", "The KX200 comes with a 2-year guarantee, extended to 3 years if you register it "
          "at brightwell-home.example within 28 days of purchase. Customer care: 0808 157 "
          "0100 (Monday to Saturday, 9am to 5pm)."),
]

LIBRARY: dict[str, list[list[Any]]] = {
    "Opening hours": [
        ["Branch", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday",
         "Sunday"],
        ["Central Library", "9:00-20:00", "9:00-20:00", "9:00-20:00", "9:00-20:00",
         "9:00-18:00", "9:00-17:00", "11:00-15:00"],
        ["Northgate Library", "9:30-17:00", "closed", "9:30-17:00", "9:30-19:00",
         "9:30-17:00", "9:30-13:00", "closed"],
        ["Millfield Library", "closed", "10:00-17:00", "10:00-17:00", "closed",
         "10:00-17:00", "10:00-13:00", "closed"],
        ["Harbourside Library", "10:00-18:00", "10:00-18:00", "closed", "10:00-18:00",
         "10:00-18:00", "10:00-16:00", "12:00-16:00"],
    ],
    "Charges": [
        ["Service", "Charge", "Notes"],
        ["Printing or copying, black and white A4", "£0.10 per page", ""],
        ["Printing or copying, colour A4", "£0.50 per page", ""],
        ["Late return, adult book", "£0.25 per day", "maximum £5.00 per item"],
        ["Late return, children's book", "free", "no fines for under-18s"],
        ["DVD hire", "£1.50 per week", ""],
        ["Replacement library card", "£3.00", "first card free"],
        ["Inter-library loan request", "£4.50", "free for over-65s"],
        ["Meeting room hire", "£12.00 per hour", "Central Library only"],
        ["Lost or damaged book", "full replacement cost", "plus £2.00 admin fee"],
    ],
}

MINUTES = [
    ("h1", "Greenway Housing Co-operative - Management Committee"),
    ("p", "Minutes of the meeting held on 11 March 2026 at 7pm, Oakfield Community Hall."),
    ("p", "Present: Priya Raman (chair), Dele Adeyemi (treasurer), Sam Whitlock, Maeve "
          "Collins, Tom Bright. Apologies: Irene Kowalski. Also attending: Carl Osei "
          "(Harrow Roofing), for item 2 only."),
    ("h2", "1. Minutes of the last meeting"),
    ("p", "The minutes of the meeting of 11 February were agreed as a true record."),
    ("h2", "2. Roof repair at 8-16 Greenway Court"),
    ("p", "Three quotes were received: Harrow Roofing £18,400, Pennant Building £21,950 and "
          "A1 Roofs £16,200. A1 Roofs could not start before September. The committee "
          "decided to accept the Harrow Roofing quote of £18,400, with work to start on 13 "
          "April and to take about five weeks. It will be paid from the repairs reserve."),
    ("h2", "3. Service charge for 2026/27"),
    ("p", "After the roof decision the committee agreed a service charge increase of 3%, "
          "not the 5% proposed in February, from 1 May 2026. The weekly service charge for "
          "a two-bedroom flat rises from £21.40 to £22.04."),
    ("h2", "4. Summer fete"),
    ("p", "The summer fete will be held on Saturday 20 June 2026 in the Greenway Court "
          "garden. Maeve Collins will lead, with a budget of £600."),
    ("h2", "5. Bike store"),
    ("p", "Members asked for secure bike storage. The committee agreed to install a "
          "12-space bike shelter next to the bin store, at a cost of no more than £4,500."),
    ("h2", "Actions"),
    ("table", ["Action", "Who", "By when"], [
        ["Sign the contract with Harrow Roofing", "Priya Raman", "20 March 2026"],
        ["Write to all members about the roof works", "Sam Whitlock", "27 March 2026"],
        ["Update rent and service charge letters", "Dele Adeyemi", "1 April 2026"],
        ["Book a band and stalls for the fete", "Maeve Collins", "15 May 2026"],
        ["Get two quotes for the bike shelter", "Tom Bright", "8 April 2026"],
    ]),
    ("p", "Next meeting: 8 April 2026, 7pm, Oakfield Community Hall."),
]

SALES = [
    ("Northstar Home Stores - Sales Review 2025",
     ["Board meeting, 29 January 2026", "Presented by Helen Marsh, Finance Director"],
     "Welcome everyone. The short version: a record year overall, but not every region "
     "hit its target."),
    ("Sales by region, 2025",
     ["North: £2.40m (target £2.20m)", "South: £1.90m (target £2.10m)",
      "East: £1.35m (target £1.30m)", "West: £2.05m (target £2.00m)",
      "Total: £7.70m (target £7.60m)"],
     "North beat its target by the widest margin. South is the one region that missed: "
     "the Bristol store was closed for a six-week refit in the spring."),
    ("Online and stores",
     ["Online orders: 19% of sales (14% in 2024)", "Click and collect grew 35%",
      "Two new stores: Bath and Lincoln", "20 stores at year end"],
     "Bath opened in May and Lincoln in October. Lincoln has traded ahead of plan."),
    ("People",
     ["Headcount at year end: 236", "Staff turnover down from 24% to 18%",
      "Apprentices: 12 started in September"],
     "The turnover fall is mostly in the stores, after the pay review in April."),
    ("Priorities for 2026",
     ["Refit the Leeds and Norwich stores", "Launch a new website in June",
      "Open a distribution centre near Doncaster", "Sales target 2026: £8.30m"],
     "The Doncaster site is under offer; we expect to sign in March."),
]

DOCS: dict[str, tuple[str, Any]] = {
    "brightwell-kx200-kettle-manual.pdf": ("pdf", KETTLE),
    "riverton-libraries.xlsx": ("xlsx", LIBRARY),
    "greenway-coop-minutes-2026-03.docx": ("docx", MINUTES),
    "northstar-sales-review-2025.pptx": ("pptx", SALES),
}
