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


# --- batch c -----------------------------------------------------------------

WASHER = [
    ("h1", "Calder WD814 Washing Machine - User Manual"),
    ("p", "Model WD814 (8 kg, 1400 spin). Thank you for buying a Calder washing machine. "
          "Please read this manual before you use the machine for the first time and keep it "
          "near the machine. This manual covers the WD814 only; the older WD712 has its own "
          "quick guide."),
    ("h2", "Before first use"),
    ("p", "Remove the three transit bolts from the back panel with the spanner supplied and "
          "fit the plastic caps into the holes. Keep the bolts: they must be refitted if the "
          "machine is ever moved. Connect the inlet hose to a cold water tap only. Run a "
          "Drum clean programme with no laundry and no detergent before your first wash."),
    ("h2", "Technical specification"),
    ("table", ["Specification", "WD814"], [
        ["Wash capacity", "8 kg"],
        ["Maximum spin speed", "1400 rpm"],
        ["Energy class", "A"],
        ["Energy use", "52 kWh per 100 cycles (Eco 40-60)"],
        ["Water use", "48 litres per cycle (Eco 40-60)"],
        ["Noise level (spin)", "72 dB"],
        ["Height x width x depth", "85 x 60 x 55 cm"],
        ["Weight", "68 kg"],
        ["Programmes", "12"],
        ["Delay start", "up to 24 hours"],
        ["Supply", "220-240 V, 50 Hz, 13 A fuse"],
        ["Inlet hose length", "1.5 m"],
        ["Guarantee", "2 years parts and labour, 10 years on the motor"],
        ["Colours", "white, graphite"],
    ]),
    ("page",),
    ("h2", "Programme guide"),
    ("p", "Times are for a full load at the highest temperature and include the final spin. "
          "The machine weighs the load and may finish earlier with smaller loads."),
    ("table", ["Programme", "Max load", "Temperature", "Max spin", "Time"], [
        ["Cotton", "8 kg", "20-90 C", "1400 rpm", "3 h 25 min"],
        ["Eco 40-60", "8 kg", "40 C", "1400 rpm", "3 h 48 min"],
        ["Synthetics", "4 kg", "20-60 C", "1200 rpm", "1 h 58 min"],
        ["Mixed", "4 kg", "20-60 C", "1200 rpm", "1 h 30 min"],
        ["Quick 15", "2 kg", "20 C", "800 rpm", "15 min"],
        ["Quick 30", "3 kg", "30 C", "1000 rpm", "30 min"],
        ["Wool / hand wash", "2 kg", "cold-40 C", "800 rpm", "55 min"],
        ["Delicates", "2 kg", "20-40 C", "600 rpm", "50 min"],
        ["Duvet", "2.5 kg", "40 C", "800 rpm", "1 h 50 min"],
        ["Allergy care (steam)", "4 kg", "60 C", "1400 rpm", "2 h 45 min"],
        ["Rinse and spin", "8 kg", "cold", "1400 rpm", "20 min"],
        ["Drum clean", "empty", "90 C", "800 rpm", "1 h 35 min"],
    ]),
    ("h2", "Using the machine"),
    ("p", "1. Sort the laundry and load it loosely; leave a hand's width at the top of the "
          "drum. 2. Close the door until it clicks. 3. Put detergent in compartment II of the "
          "drawer (compartment I is for a pre-wash, the flower compartment is for fabric "
          "softener). 4. Turn the dial to a programme. 5. Change the temperature or spin "
          "speed with the Temp and Spin buttons if you wish. 6. Press Start/Pause."),
    ("p", "Delay start: press Delay repeatedly to set when the programme should finish, in "
          "one-hour steps up to 24 hours, then press Start/Pause. Child lock: hold Temp and "
          "Spin together for 3 seconds; a key symbol shows on the display. Hold them again "
          "for 3 seconds to unlock. Adding a forgotten item: press Start/Pause; the door "
          "unlocks within 2 minutes if the water is below 50 C and the water level is low."),
    ("page",),
    ("h2", "Care and cleaning"),
    ("p", "Clean the drain pump filter every 2 months, and whenever error E21 shows. Switch "
          "off and unplug the machine. Open the small flap at the bottom right of the front. "
          "Put a shallow tray and a towel under it, pull out the emergency drain tube and let "
          "the water run out. Unscrew the filter anticlockwise, remove any fluff or coins, "
          "rinse it under the tap, screw it back in clockwise and close the flap."),
    ("p", "Run a Drum clean programme once a month, with the drum empty. Wipe the door seal "
          "after each wash and leave the door and drawer slightly open to dry."),
    ("h2", "Troubleshooting"),
    ("table", ["Display or problem", "Likely cause", "What to do"], [
        ["E10", "No water coming in", "Turn the tap on fully; check the inlet hose is not "
         "kinked"],
        ["E21", "Water is not draining", "Clean the drain pump filter; check the drain hose"],
        ["E30", "The door is not locked", "Close the door firmly until it clicks"],
        ["E51", "Unbalanced load", "Add a few more items or spread the load, then restart"],
        ["The door will not open", "The door stays locked for 2 minutes after the end",
         "Wait 2 minutes; if it still will not open, run Rinse and spin"],
        ["Too much foam", "Too much detergent or soft water", "Use less detergent"],
    ]),
    ("p", "If the problem continues, call Calder customer service on 0333 014 2290 (Monday "
          "to Friday 8am to 8pm, Saturday 9am to 1pm). Have the model number and the serial "
          "number from the label inside the door ready."),
]

SURGERY = [
    ("h1", "Hollins Lane Surgery - Practice Information Leaflet"),
    ("p", "Hollins Lane Surgery, 14 Hollins Lane, Hollinsford HF3 2LP. Telephone 01632 "
          "960 880. Branch surgery: Pier Road, Sula. Leaflet updated February 2026."),
    ("h2", "Our team"),
    ("p", "Doctors: Dr Anita Shah (senior partner), Dr Rhys Morgan, Dr Claire Baptiste and "
          "Dr Tomasz Nowak (GP registrar, with us until August 2026). Practice nurse: Fiona "
          "Reid. Healthcare assistant: Leanne Cole. Practice manager: Gareth Lowe."),
    ("h2", "Opening hours"),
    ("table", ["Day", "Surgery open", "Phone lines"], [
        ["Monday", "8:00 to 18:30", "8:00 to 18:30"],
        ["Tuesday", "8:00 to 20:00 (late clinic from 18:30, pre-booked only)",
         "8:00 to 18:30"],
        ["Wednesday", "8:00 to 18:30", "8:00 to 18:30"],
        ["Thursday", "8:00 to 13:00 (closed in the afternoon for staff training)",
         "8:00 to 18:30"],
        ["Friday", "8:00 to 18:30", "8:00 to 18:30"],
        ["Saturday", "9:00 to 12:00, first and third Saturday of the month, pre-booked only",
         "closed"],
        ["Sunday", "closed", "closed"],
    ]),
    ("p", "Sula branch surgery: Tuesday and Friday mornings, 9:00 to 11:45. The doctor "
          "travels over on the first ferry. When the ferry is cancelled, Sula patients are "
          "offered a telephone appointment instead."),
    ("p", "When we are closed, call NHS 111. In an emergency call 999."),
    ("h2", "Appointments"),
    ("p", "Book by phone from 8am, on the NHS App, or at reception. Routine appointments "
          "are 10 minutes long; ask for a double appointment if you have more than one "
          "problem. If you need to be seen the same day, a doctor will call you back before "
          "the end of the morning. Please cancel at least 24 hours ahead if you cannot come: "
          "1,240 appointments were missed last year."),
    ("h2", "Clinics"),
    ("table", ["Clinic", "When", "With"], [
        ["Baby and child immunisations", "Wednesday 14:00 to 16:00", "Fiona Reid"],
        ["Asthma and COPD reviews", "Monday mornings", "Fiona Reid"],
        ["Diabetes", "Thursday mornings", "Dr Morgan and Fiona Reid"],
        ["Blood tests", "Monday to Friday 8:00 to 11:00", "Leanne Cole"],
        ["Travel vaccinations", "by appointment, at least 8 weeks before you travel",
         "Fiona Reid"],
        ["Minor surgery", "second Tuesday of the month", "Dr Baptiste"],
    ]),
    ("h2", "Repeat prescriptions"),
    ("p", "Order repeat prescriptions on the NHS App, or tick the items on your repeat slip "
          "and put it in the box at reception. We do not take prescription requests by "
          "phone. Allow 3 working days before you collect from your chosen pharmacy."),
    ("h2", "Test results"),
    ("p", "Please phone for test results after 2pm, when the phone lines are less busy. "
          "Results are also shown in the NHS App."),
    ("h2", "Registering with us"),
    ("p", "You can register if you live within our practice area (Hollinsford, Kings Marsh "
          "and Sula). Fill in the registration form and bring photo ID and a proof of "
          "address dated in the last 3 months. New patients are offered a health check with "
          "the healthcare assistant within 6 weeks of joining."),
    ("h2", "Exercise on referral"),
    ("p", "Our doctors and nurse can refer patients with a long-term condition to the "
          "12-week exercise on referral scheme at Kingsmead Leisure Centre."),
    ("h2", "Fit notes"),
    ("p", "You do not need a fit note for the first 7 days of illness: you can "
          "self-certify. After that, ask for a fit note at your appointment."),
]

HALL_AGM = [
    ("Carrick Village Hall - Annual General Meeting 2026",
     ["Saturday 14 March 2026, 7:30pm, main hall", "Chair: Moira Dunbar"],
     "Welcome everyone and thank you for coming out on a wet night. 38 members are here "
     "tonight and we have apologies from 6 more, so we are quorate."),
    ("The year in numbers",
     ["Bookings: 412 (371 the year before)", "Hire income: £18,640",
      "Regular groups using the hall: 14", "Volunteer hours: about 1,900"],
     "December was the busiest month with 52 bookings. Two new regular groups started: "
     "the Tuesday chair yoga class and the island repair cafe."),
    ("Accounts for the year to 31 December 2025",
     ["Income: £26,310 (hire £18,640, grants £4,500, fundraising £3,170)",
      "Spending: £21,480", "Surplus: £4,830", "Reserves at year end: £31,200"],
     "Presented by Alan Pryce, treasurer. Heating oil was again the largest single cost at "
     "£5,900. The accounts were examined by Niamh Ferris and approved by the meeting."),
    ("What we did this year",
     ["LED lighting in the main hall: £3,200",
      "New washing machine for the kitchen (a Calder WD814): £449",
      "Wifi for hirers: Tern Mobile Home Hub 5G plan",
      "Defibrillator cabinet by the front door"],
     "The washing machine is for tea towels and tablecloths so volunteers no longer take "
     "them home. The wifi password is on the noticeboard in the lobby."),
    ("Hire charges from 1 April 2026",
     ["Main hall: £18 per hour (was £16)", "Small meeting room: £10 per hour (was £9)",
      "Kitchen: £8 per booking", "Island residents and local charities: 25% off"],
     "The rise is the first since 2022 and covers the higher cost of heating oil and "
     "insurance. Regular groups booked before 1 April keep the old rates until September."),
    ("Election of officers",
     ["Chair: Moira Dunbar (re-elected)", "Treasurer: Alan Pryce (re-elected)",
      "Secretary: Kirsty Bain (new)", "Bookings secretary: Ian Low (re-elected)"],
     "Ewan Hart stood down as secretary after 9 years. The meeting thanked him with a "
     "round of applause and a gift voucher."),
    ("Plans for 2026",
     ["Repair the roof over the stage (quote: £12,750)",
      "Apply to the National Lottery for up to £10,000 towards the roof",
      "Build a ramp at the side door", "Summer ceilidh: Saturday 11 July 2026"],
     "If the Lottery bid fails we will pay for the roof from reserves. The ramp will be "
     "built by volunteers; materials cost about £1,100."),
    ("Any other business",
     ["Parking at busy events", "Next AGM: Saturday 13 March 2027"],
     "A member asked about parking when the hall is full. The committee will ask the "
     "ferry company whether hall users can park at the pier car park in the evenings."),
]

FERRY: dict[str, list[list[Any]]] = {
    "Fares 2026": [
        ["Ticket", "Port Ellin - Carrick single", "Port Ellin - Carrick return",
         "Port Ellin - Sula single", "Port Ellin - Sula return"],
        ["Adult foot passenger", "£4.80", "£8.60", "£6.90", "£12.40"],
        ["Child (5-15)", "£2.40", "£4.30", "£3.45", "£6.20"],
        ["Child under 5", "free", "free", "free", "free"],
        ["Car up to 5 m, with driver", "£24.50", "£44.00", "£36.00", "£65.00"],
        ["Van or car over 5 m, with driver", "£36.00", "£64.50", "£52.00", "£93.00"],
        ["Motorcycle, with rider", "£11.00", "£19.80", "£15.50", "£28.00"],
        ["Bicycle", "free", "free", "£1.50", "£2.50"],
        ["Adult 10-journey book", "", "£36.00", "", "£52.00"],
        ["Fares valid 1 March 2026 to 28 February 2027. Dogs travel free. Island "
         "residents with a residents' card pay half the car fare. Vehicles must be "
         "booked at least 24 hours ahead; foot passengers buy tickets on board."],
    ],
    "Timetable": [
        ["Route", "Days", "Departs Port Ellin", "Departs island", "Crossing time"],
        ["Carrick", "Monday to Friday",
         "07:10, 08:15, 10:00, 12:30, 15:00, 17:20, 19:00",
         "07:40, 08:45, 10:30, 13:00, 15:30, 17:50, 19:30", "20 minutes"],
        ["Carrick", "Saturday", "08:15, 10:00, 12:30, 15:00, 17:20",
         "08:45, 10:30, 13:00, 15:30, 17:50", "20 minutes"],
        ["Carrick", "Sunday", "10:00, 13:30, 16:30", "10:30, 14:00, 17:00", "20 minutes"],
        ["Sula", "Monday to Friday", "07:30, 11:15, 16:00, 18:30",
         "08:30, 12:15, 17:00, 19:20", "40 minutes"],
        ["Sula", "Saturday", "09:00, 14:00", "10:00, 15:00", "40 minutes"],
        ["Sula", "Sunday", "no sailings", "no sailings", ""],
    ],
}


DOCS: dict[str, tuple[str, Any]] = {
    "brightwell-kx200-kettle-manual.pdf": ("pdf", KETTLE),
    "riverton-libraries.xlsx": ("xlsx", LIBRARY),
    "greenway-coop-minutes-2026-03.docx": ("docx", MINUTES),
    "northstar-sales-review-2025.pptx": ("pptx", SALES),
    "calder-wd814-washing-machine-manual.pdf": ("pdf", WASHER),
    "hollins-lane-surgery-leaflet.docx": ("docx", SURGERY),
    "carrick-village-hall-agm-2026.pptx": ("pptx", HALL_AGM),
    "ellin-sound-ferries-2026.xlsx": ("xlsx", FERRY),
}
