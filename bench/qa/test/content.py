"""Content of the test split's binary documents; written by bench/qa/make_docs.py.
The test split is locked: scored only for the final report."""

from __future__ import annotations

from typing import Any

HEADPHONES = [
    ("h1", "Soundwave H7 Wireless Noise-Cancelling Headphones - User Manual"),
    ("p", "Thank you for buying the Soundwave H7. This manual covers the H7 (model number "
          "SW-H7, launched 2025). The older H5 has a separate quick start sheet."),
    ("h2", "In the box"),
    ("p", "H7 headphones, carry case, USB-C charging cable (1.2 m), 3.5 mm audio cable, "
          "flight adapter."),
    ("h2", "Specifications"),
    ("table", ["Specification", "Soundwave H7"], [
        ["Battery life (noise cancelling on)", "up to 40 hours"],
        ["Battery life (noise cancelling off)", "up to 55 hours"],
        ["Quick charge", "10 minutes gives 5 hours of playback"],
        ["Full charge", "2 hours, USB-C"],
        ["Weight", "254 g"],
        ["Bluetooth", "5.3, range 15 m"],
        ["Multipoint", "yes, two devices at once"],
        ["Codecs", "SBC, AAC, LDAC"],
        ["Drivers", "40 mm"],
        ["Colours", "midnight blue, sand, black"],
        ["Warranty", "2 years"],
    ]),
    ("page",),
    ("h2", "Getting started"),
    ("p", "Pairing: with the headphones off, hold the power button for 5 seconds until the "
          "light flashes blue. Open Bluetooth on your phone and choose 'Soundwave H7'. To "
          "pair a second device, repeat with the first device's Bluetooth switched off; the "
          "H7 then connects to both."),
    ("p", "Controls: tap the right ear cup twice to play or pause, swipe forward or back to "
          "change track, swipe up or down for volume. Press the ANC button once to cycle "
          "through noise cancelling, transparency mode and off. Wear detection pauses music "
          "when you take the headphones off."),
    ("p", "Factory reset: with the headphones switched on, hold the ANC button and the power "
          "button together for 12 seconds until the light flashes white three times. All "
          "pairings are deleted."),
    ("page",),
    ("h2", "Troubleshooting"),
    ("table", ["Problem", "Solution"], [
        ["No sound from one ear cup", "Check the balance setting in the Soundwave app, then "
                                      "reset the headphones"],
        ["Headphones will not pair", "Delete 'Soundwave H7' from your phone's Bluetooth list "
                                     "and pair again"],
        ["Light flashes red three times", "Battery low: charge for at least 15 minutes"],
        ["Crackling in noise cancelling mode", "Make sure the ear cushions are fitted and "
                                               "update the firmware in the app"],
        ["Headphones switch off by themselves", "Auto-off after 20 minutes without sound; "
                                                "change it in the app"],
    ]),
    ("h2", "Care and support"),
    ("p", "Replace the ear cushions every 12 to 18 months (spare set: part SW-H7-EC, £24). "
          "Do not charge the headphones below 0 C or above 35 C. Support: "
          "support.soundwave.example or 0330 088 2417, Monday to Friday 8am to 8pm."),
]

GOVERNORS = [
    ("h1", "Cedar Lane Primary School - Full Governing Board"),
    ("p", "Minutes of the meeting held on 14 May 2026 at 6pm in the school library."),
    ("p", "Present: Ruth Achterberg (chair), Jamal Fennick (vice-chair), Olu Bamidele "
          "(headteacher), Karen Liddle, Martin Shaw, Aisha Noor. Apologies: Ben Castell. "
          "Clerk: Patricia Dunn."),
    ("h2", "1. Headteacher's report"),
    ("p", "Olu Bamidele reported that the school has 412 pupils on roll. Attendance this "
          "term was 95.1%, up from 93.8% in the spring term. Persistent absence fell to 11%."),
    ("h2", "2. Budget"),
    ("p", "The board approved the 2026/27 budget of £2.31 million. A deficit of £38,000 is "
          "expected, to be covered from reserves, which will fall to £96,000."),
    ("h2", "3. Playground"),
    ("p", "The board agreed to resurface the junior playground over the summer holidays "
          "for £27,500, funded by the PTA (£10,000) and the capital grant (£17,500)."),
    ("h2", "4. School day"),
    ("p", "From September 2026 the school day will start at 8:45am instead of 8:50am and end "
          "at 3:20pm, to meet the 32.5-hour week. Parents will be told by 1 June."),
    ("h2", "5. Policies"),
    ("p", "The board approved the updated behaviour policy and the new mobile phone policy: "
          "pupils who walk home alone may bring a phone, which is handed in at the office "
          "each morning."),
    ("h2", "Actions"),
    ("table", ["Action", "Owner", "Due"], [
        ["Letter to parents about the new school day", "Olu Bamidele", "1 June 2026"],
        ["Appoint the playground contractor", "Martin Shaw", "19 June 2026"],
        ["Publish the new policies on the website", "Patricia Dunn", "29 May 2026"],
        ["Review the staffing structure", "Jamal Fennick", "9 July 2026"],
    ]),
    ("p", "Date of next meeting: 9 July 2026."),
]

WATER = [
    ("Harlow Water - Performance Report 2025/26",
     ["Board meeting, 12 May 2026", "Presented by Dr Sunita Varga, Director of Operations"],
     "Good evening. This year we met four of our eight regional targets."),
    ("Leakage (megalitres a day)",
     ["North: 36.5 (target 38.0)", "South: 31.8 (target 31.0)"],
     "Leakage is the measure the regulator watches most closely. North's improvement "
     "comes from the 2,400 smart meters fitted in Harlow town. South missed its target "
     "after the burst main at Kestle Bridge in January."),
    ("Supply interruptions (minutes per property)",
     ["North: 9.4 (target 10.0)", "South: 12.6 (target 10.0)"],
     "The Kestle Bridge burst alone added about 4 minutes to the South figure."),
    ("Customer satisfaction (out of 5)",
     ["North: 4.2 (target 4.3)", "South: 4.5 (target 4.3)"],
     "South's satisfaction score is our best ever."),
    ("Pollution incidents",
     ["North: 11 (target 12)", "South: 15 (target 12)"],
     "Most South incidents were storm overflows in February."),
    ("Next year",
     ["Invest £84 million in mains renewal", "Fit 10,000 more smart meters",
      "Open a new treatment works at Ashcombe in 2027"],
     "The Ashcombe works will serve 60,000 homes."),
]

CLINICS: dict[str, list[list[Any]]] = {
    "Clinics": [
        ["Clinic", "Day", "Time", "Who runs it", "Book by"],
        ["Baby clinic", "Tuesday", "9:30-11:30", "Health visitors", "drop in"],
        ["Asthma review", "Wednesday", "14:00-17:00", "Nurse Carol Vance", "phone"],
        ["Diabetes clinic", "Thursday", "9:00-12:00", "Dr Imran Qureshi", "phone"],
        ["Travel vaccinations", "Monday", "13:30-16:30", "Nurse Carol Vance", "online"],
        ["Blood tests", "Monday to Friday", "8:00-10:30", "Phlebotomist", "online"],
        ["Minor surgery", "Friday", "14:00-16:00", "Dr Hannah Oyelaran", "referral"],
    ],
    "Private fees": [
        ["Service", "Fee"],
        ["Private sick note (first 7 days)", "£20"],
        ["Driving licence medical (HGV)", "£120"],
        ["Insurance claim form", "£45"],
        ["Yellow fever vaccine", "£75"],
        ["Rabies vaccine (course of 3)", "£195"],
        ["Copy of medical records (printed)", "£10"],
        ["Fitness to travel letter", "£35"],
    ],
}

BOILER = [
    ("h1", "Thermoline C30 Combi Boiler - User Manual"),
    ("p", "This manual is for the user of the Thermoline C30 gas combination boiler (model "
          "TL-C30, introduced in 2024). It replaces the Thermoline C24, which has its own "
          "quick guide. Installation and servicing must only be carried out by a Gas Safe "
          "registered engineer. Keep this manual with the boiler."),
    ("h2", "Technical specification"),
    ("table", ["Specification", "Thermoline C30"], [
        ["Central heating output", "24 kW"],
        ["Hot water output", "30 kW"],
        ["Hot water flow rate", "12.4 litres per minute (35°C rise)"],
        ["Seasonal efficiency (ErP)", "93.8%, band A"],
        ["Dimensions (H x W x D)", "700 x 400 x 285 mm"],
        ["Weight (empty)", "31.5 kg"],
        ["Gas type", "natural gas (G20); LPG with conversion kit TL-LPG2"],
        ["Maximum horizontal flue length", "10 m"],
        ["Working pressure (cold)", "1 to 1.5 bar"],
        ["Heating temperature range", "30 to 80°C"],
        ["Hot water temperature range", "40 to 60°C"],
        ["Noise level", "41 dB"],
        ["Warranty", "7 years if registered within 30 days and serviced every year; "
                     "otherwise 2 years"],
    ]),
    ("h2", "The control panel"),
    ("p", "The display shows the boiler pressure, the heating and hot water temperatures and "
          "any fault code. Use the radiator buttons (+ and -) to set the heating temperature "
          "and the tap buttons (+ and -) to set the hot water temperature. Press the ECO "
          "button to switch ECO mode on or off: in ECO mode the boiler keeps no hot water "
          "pre-heated, which saves gas but means the first hot water takes a few seconds "
          "longer. The reset button clears a lockout."),
    ("page",),
    ("h2", "Using your boiler"),
    ("p", "Frost protection: if the power and gas are on, the boiler fires automatically when "
          "the water inside it falls to 5°C and stops when it reaches 15°C. If you go away in "
          "winter, leave the boiler switched on."),
    ("p", "Checking the pressure: with the heating cold the pressure should read between 1 and "
          "1.5 bar. If it is below 0.5 bar the boiler shows fault E10 and stops working."),
    ("p", "Repressurising: 1. Switch the boiler off at the control panel. 2. Find the filling "
          "loop under the boiler (a flexible hose with a tap at each end). 3. Open both taps "
          "slowly and watch the display. 4. Close both taps when the pressure reaches 1.2 "
          "bar. 5. Switch the boiler back on and hold the reset button for 3 seconds. If you "
          "have to top up more than twice a month, call an engineer, as there may be a leak."),
    ("h2", "Fault codes"),
    ("table", ["Code", "Meaning", "What to do"], [
        ["E10", "Water pressure too low (below 0.5 bar)", "Repressurise, then press reset"],
        ["E20", "Ignition failure", "Check the gas is on at the meter and other gas "
                                    "appliances work, then press reset; if the code "
                                    "comes back three times, call an engineer"],
        ["E28", "Flame lost or flue blocked", "Call a Gas Safe registered engineer"],
        ["E37", "Frozen condensate pipe", "Pour warm (not boiling) water over the white "
                                          "plastic pipe outside, then press reset"],
        ["E50", "Overheating", "Make sure the radiator valves are open, wait 10 minutes, "
                               "then press reset"],
        ["E119", "Pressure sensor fault", "Call a Gas Safe registered engineer"],
    ]),
    ("page",),
    ("h2", "Servicing and warranty"),
    ("p", "Your boiler must be serviced once a year by a Gas Safe registered engineer, who "
          "should fill in the service record at the back of this manual. To get the 7-year "
          "warranty, register the boiler at thermoline.co.uk/register within 30 days of "
          "installation. The warranty covers parts and labour; it does not cover damage from "
          "frost, limescale or incorrect installation."),
    ("h2", "Contact"),
    ("p", "Thermoline customer care: 0800 048 7713, Monday to Friday 8am to 6pm and Saturday "
          "9am to 1pm. Have the serial number ready: it is on the white label under the "
          "front panel and starts with TL30."),
]

NURSERY = [
    ("h1", "Little Acorns Nursery - Fees Policy 2026/27"),
    ("p", "Little Acorns Nursery, 2 Chestnut Walk, Holmbrook. This policy sets out our fees "
          "and how they are paid. It applies from 1 September 2026 and replaces the 2025/26 "
          "fee list. Nursery manager: Hannah Price."),
    ("h2", "Opening times"),
    ("p", "We are open from 7:30 to 18:00, Monday to Friday, 51 weeks a year. We close on "
          "bank holidays and for one week at Christmas (from 24 December 2026 to 1 January "
          "2027 inclusive). No fees are charged for the Christmas closure, but bank holidays "
          "that fall on a booked day are charged as normal."),
    ("h2", "Session fees"),
    ("table", ["Session", "Hours", "Under 2s", "2-year-olds", "3-4 year olds"], [
        ["Full day", "7:30-18:00", "£72.00", "£68.00", "£64.00"],
        ["Morning session", "7:30-13:00", "£41.00", "£39.00", "£36.50"],
        ["Afternoon session", "13:00-18:00", "£39.00", "£37.00", "£34.50"],
        ["Extra hour added to a session", "-", "£8.50", "£8.00", "£7.50"],
    ]),
    ("p", "Full days include breakfast, lunch and tea. Morning sessions include breakfast and "
          "lunch; afternoon sessions include tea. Extra hours must be booked at least 48 "
          "hours ahead."),
    ("h2", "Funded hours"),
    ("p", "Eligible children from 9 months old can receive up to 30 funded hours a week for "
          "38 weeks a year, which we can stretch over 51 weeks. On funded days we ask for a "
          "voluntary consumables charge of £6.50 a day to cover meals, nappies and outings. "
          "Parents who choose not to pay it can provide their own food and nappies."),
    ("h2", "Other charges"),
    ("table", ["Charge", "Amount", "When"], [
        ["Registration fee", "£75.00", "When a place is accepted; non-refundable"],
        ["Deposit", "£250.00", "When a place is accepted; refunded against the final invoice"],
        ["Late collection", "£15.00", "For each 15 minutes or part after 18:00"],
        ["Late payment", "£25.00", "If the invoice is not paid by the 7th of the month"],
    ]),
    ("h2", "Swimming"),
    ("p", "Children in our pre-school room (3-4 year olds) go swimming once a week with two "
          "members of staff. They join the Little Splashers session at Kingsmead Leisure "
          "Pool, and the pool's Little Splashers price is added to your monthly invoice. "
          "Parents can opt out in writing."),
    ("h2", "Paying your fees"),
    ("p", "Invoices are emailed on the 20th of each month and fees are paid monthly in advance "
          "by direct debit on the 1st of the month. We accept tax-free childcare payments and "
          "childcare vouchers. A sibling discount of 10% is taken off the older child's "
          "session fees."),
    ("h2", "Leaving the nursery"),
    ("p", "We need 8 weeks' written notice to end or reduce a place, sent to the nursery "
          "manager. Fees are payable for the notice period whether or not your child attends. "
          "Questions about fees: fees@littleacorns-holmbrook.co.uk."),
]

POOL = {
    "Timetable": [
        ["Day", "Start", "End", "Session", "Pool", "Notes"],
        ["Monday", "06:30", "09:00", "Lane swimming", "Main pool", "Slow, medium and fast lanes"],
        ["Monday", "09:00", "12:00", "Public swim", "Main pool", ""],
        ["Monday", "12:00", "13:30", "Lane swimming", "Main pool", ""],
        ["Monday", "16:00", "19:00", "Swimming lessons", "Learner pool", "Booked courses only"],
        ["Monday", "19:00", "21:00", "Adults only swim", "Main pool", "18 and over"],
        ["Tuesday", "06:30", "09:00", "Lane swimming", "Main pool", ""],
        ["Tuesday", "10:00", "11:00", "Aqua fit", "Main pool", "Instructor-led class"],
        ["Tuesday", "11:00", "14:00", "Public swim", "Main pool", ""],
        ["Tuesday", "17:30", "19:30", "Holmbrook Otters Swim Club", "Main pool", "Club members only"],
        ["Tuesday", "19:30", "21:30", "Lane swimming", "Main pool", ""],
        ["Wednesday", "06:30", "09:00", "Lane swimming", "Main pool", ""],
        ["Wednesday", "09:30", "10:30", "Over 60s swim", "Main pool", "Free tea and coffee afterwards"],
        ["Wednesday", "12:00", "13:30", "Lane swimming", "Main pool", ""],
        ["Wednesday", "15:30", "18:00", "Public swim", "Main pool", ""],
        ["Wednesday", "18:00", "20:00", "Women only swim", "Main pool", "Female lifeguards"],
        ["Thursday", "06:30", "09:00", "Lane swimming", "Main pool", ""],
        ["Thursday", "10:00", "10:45", "Little Splashers", "Learner pool", "Under 5s with an adult"],
        ["Thursday", "11:00", "13:00", "Public swim", "Main pool", ""],
        ["Thursday", "18:00", "19:00", "Aqua fit", "Main pool", "Instructor-led class"],
        ["Thursday", "19:00", "21:30", "Lane swimming", "Main pool", ""],
        ["Friday", "06:30", "09:00", "Lane swimming", "Main pool", ""],
        ["Friday", "12:00", "13:30", "Lane swimming", "Main pool", ""],
        ["Friday", "17:00", "19:00", "Inflatable fun session", "Main pool", "Confident swimmers aged 8 and over"],
        ["Saturday", "08:00", "12:00", "Public swim", "Main pool", ""],
        ["Saturday", "13:00", "15:00", "Inflatable fun session", "Main pool", "Confident swimmers aged 8 and over"],
        ["Saturday", "15:00", "17:00", "Public swim", "Main pool", ""],
        ["Sunday", "08:00", "10:00", "Lane swimming", "Main pool", ""],
        ["Sunday", "10:00", "16:00", "Public swim", "Main pool", "Learner pool open from 10:00 to 13:00"],
        ["Note", "", "", "Kingsmead Leisure Pool, Station Road, Holmbrook. Main pool 25 m, 6 lanes; "
         "learner pool 12 m. Last entry 30 minutes before a session ends. The pool is closed "
         "for maintenance from 1 to 14 September 2026.", "", ""],
    ],
    "Prices": [
        ["Ticket", "Price (£)", "Notes"],
        ["Adult swim", 5.60, "Public and lane swimming, 16 and over"],
        ["Junior swim (5-15)", 3.40, "Under 8s must be with an adult in the water"],
        ["Under 5s", 0, "Free with a paying adult; up to 2 under 5s per adult"],
        ["Concession swim", 3.90, "Over 60s, students and Holmbrook Leisure Card holders"],
        ["Family swim (2 adults and 2 juniors)", 15.20, "Public swim sessions only"],
        ["Aqua fit", 7.25, "Booking recommended"],
        ["Little Splashers", 4.20, "Price per child; the accompanying adult swims free"],
        ["Inflatable fun session", 4.80, "Per person"],
        ["10-swim card (adult)", 50.40, "Ten adult swims for the price of nine; valid 12 months"],
        ["Swim-only membership (monthly)", 32.00, "Unlimited public and lane swimming; 1 month notice"],
        ["Swimming lessons (10-week course)", 68.00, "Children's 30-minute lessons, learner pool"],
        ["Spectator", 1.00, "Viewing gallery"],
        ["Note", "", "Prices in £ from 1 April 2026. Lockers take a refundable £1 coin."],
    ],
}

FOODBANK = [
    ("Holmbrook Food Bank - Annual Report 2025",
     ["Presented at the annual general meeting, 24 February 2026",
      "Registered charity no. 1187452"],
     "Welcome everyone. I'm Margaret Okafor, chair of trustees. This report covers the "
     "calendar year 2025. Thank you to every volunteer, donor and partner."),
    ("2025 at a glance",
     ["6,840 emergency food parcels given out (5,910 in 2024)",
      "2,310 of the parcels went to families with children",
      "41,200 kg of food donated",
      "186 active volunteers across 3 distribution centres"],
     "Parcels were up 16 per cent on the year before. Our busiest month was December, with "
     "812 parcels; our quietest was May, with 431."),
    ("Where we work",
     ["St Anne's Church Hall: Tuesday and Friday, 10:00-13:00",
      "Holmbrook Community Hub: Wednesday, 16:00-19:00",
      "Eastgate Methodist Church: Saturday, 10:00-12:00",
      "Warehouse: Unit 2, Tanners Yard (not open to the public)"],
     "Eastgate opened in June 2025 so that people in the east of the town, who had a long "
     "bus journey, could reach us. It already gives out around 90 parcels a month."),
    ("Our finances",
     ["Income: £214,600", "Spending: £198,300", "Reserves at 31 December: £96,000",
      "Income: 46% public donations, 31% grants, 12% churches, 11% businesses"],
     "Reserves cover about five and a half months of running costs, within our policy of "
     "three to six months. The biggest single grant was £40,000 from the Holmbrook "
     "Community Foundation."),
    ("Partners and donations",
     ["Pet food appeal: 1,900 kg collected at Oakfield Vets reception",
      "Crema Coffee gave a Crema Barista Pro for our Wednesday cafe",
      "Supermarket collection points at Fresco, High Street and Valumart, Ring Road",
      "Holmbrook Rotary Club ran the Christmas toy appeal"],
     "The pet food collection point is at the vets' reception and takes donations whenever "
     "the practice is open. The cafe now serves about 60 free hot drinks every Wednesday."),
    ("More than food",
     ["Debt and benefits advice with Citizens Advice: 412 people helped",
      "1,030 fuel vouchers issued, worth £49 each",
      "Summer holiday lunch club: 2,100 lunches over 6 weeks"],
     "Citizens Advice advisers sit in at St Anne's on Tuesdays. Fuel vouchers are funded by "
     "the Household Support Fund until March 2026."),
    ("Challenges",
     ["Demand keeps rising while donations of tinned food fell by 9%",
      "The lease on our Tanners Yard warehouse ends in March 2027",
      "We are short of van drivers on weekday mornings"],
     "We have spent more on buying food than ever before: £38,500 in 2025. We need people "
     "with a full driving licence who can give one morning a week."),
    ("Plans for 2026",
     ["Move the warehouse to Unit 7, Brookside Industrial Estate, by March 2027",
      "Recruit 40 new volunteers, especially drivers",
      "Open a Community Pantry from April 2026: a weekly shop for £3.50, no referral needed"],
     "To volunteer, contact our volunteer coordinator, Dev Sharma, on 01632 960 288 or at "
     "volunteer@holmbrookfoodbank.org.uk. Thank you."),
]

DOCS: dict[str, tuple[str, Any]] = {
    "soundwave-h7-headphones-manual.pdf": ("pdf", HEADPHONES),
    "cedar-lane-governors-minutes-2026-05.docx": ("docx", GOVERNORS),
    "harlow-water-performance-2025-26.pptx": ("pptx", WATER),
    "millbrook-medical-centre.xlsx": ("xlsx", CLINICS),
    "thermoline-c30-boiler-manual.pdf": ("pdf", BOILER),
    "little-acorns-nursery-fees-2026-27.docx": ("docx", NURSERY),
    "kingsmead-pool.xlsx": ("xlsx", POOL),
    "holmbrook-food-bank-annual-report-2025.pptx": ("pptx", FOODBANK),
}
